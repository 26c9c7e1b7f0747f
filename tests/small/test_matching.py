"""edit_file's tolerant matcher (agent/tools/matching.py): the pure function, then through real turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.tools import matching

from .conftest import GREET, AgentFactory, results

CODE = '''class Greeter:
    def greet(self, name):
        if name:
            return 'Hello, ' + name
        return 'Hello'
'''


def _edit(text_: str, old: str, new: str) -> tuple[str, str | None]:
    found = matching.find(text_, old, new)
    assert len(found.spans) == 1, found
    return matching.apply(text_, found.spans), found.how


def test_exact_text_wins() -> None:
    out, how = _edit(GREET, '"Hello, "', '"Hi, "')
    assert how is None and '"Hi, " + name' in out


def test_indentation_differs_and_new_string_is_reindented() -> None:
    old = "if name:\n    return 'Hello, ' + name"  # copied without the method's indentation
    new = "if name:\n    return 'Hi, ' + name"
    out, how = _edit(CODE, old, new)
    assert how and "indentation" in how
    assert "        if name:\n            return 'Hi, ' + name\n" in out and out.count("Hello") == 1


def test_quote_style_differs_and_new_string_takes_the_files_quotes() -> None:
    out, how = _edit(CODE, '        return "Hello"', '        return "Howdy"')
    assert how and "quote" in how
    assert "return 'Howdy'" in out and 'return "Howdy"' not in out


def test_fragment_with_other_quotes_and_spacing() -> None:
    out, how = _edit(GREET, "'Hello, '+name", "'Hi, '+name")
    assert how and "spacing" in how
    assert '    return "Hi, "+name + "!"\n' in out  # the file's quotes; the model's spacing where it replaced


def test_line_numbers_copied_from_read_file_are_ignored() -> None:
    old = "     4\tdef greet(name):\n     5\t    return \"Hello, \" + name + \"!\""
    new = "def greet(name):\n    return \"Hi, \" + name + \"!\""
    out, how = _edit(GREET, old, new)
    assert how and "line numbers" in how and 'return "Hi, " + name' in out


def test_trailing_whitespace_and_crlf_in_the_file() -> None:
    body = "a = 1   \r\nb = 2\r\n"
    out, how = _edit(body, "a = 1\nb = 2", "a = 1\nb = 3")
    assert how is not None and "b = 3" in out


def test_ambiguous_loose_matches_are_all_found() -> None:
    body = "x = 'a'\ny = 1\nx = 'a'\n"
    found = matching.find(body, 'x = "a"', 'x = "b"')
    assert len(found.spans) == 2


def test_absent_text_raises() -> None:
    with pytest.raises(matching.NotFound):
        matching.find(GREET, "def farewell(name):", "def bye(name):")


@pytest.mark.parametrize("old", ["old_string", "<old_string>", " old_string ", "..."])
def test_placeholder_echo_is_recognised(old: str) -> None:
    assert matching.placeholder_echo(old, "Hi") is not None
    assert matching.placeholder_echo("Hello", "new_string") is not None
    assert matching.placeholder_echo("Hello", "Hi") is None


# ----------------------------------------------------------------------------- through real turns
async def _turn(make_agent: AgentFactory, srv: ScriptedServer, *edits: dict[str, object]) -> list[str]:
    srv.push(tools(call("read_file", {"path": "greet.py"})), *(tools(call("edit_file", e)) for e in edits),
             text("done"))
    return results(await make_agent().run_conversation("edit greet.py"))[1:]


async def test_loose_match_says_what_it_matched(make_agent: AgentFactory, srv: ScriptedServer,
                                               workspace: Path) -> None:
    (out,) = await _turn(make_agent, srv, {"path": "greet.py", "old_string": "return 'Hello, ' + name + '!'",
                                           "new_string": "return 'Hi, ' + name + '!'"})
    assert out.startswith("Edited greet.py") and "matched ignoring" in out and 'return "Hello, " + name' in out
    assert 'return "Hi, " + name + "!"' in (workspace / "greet.py").read_text()


async def test_placeholder_old_string_is_refused_with_help(make_agent: AgentFactory, srv: ScriptedServer,
                                                           workspace: Path) -> None:
    (out,) = await _turn(make_agent, srv, {"path": "greet.py", "old_string": "old_string", "new_string": "new_string"})
    assert out.startswith("error") and "placeholder" in out and "read_file" in out
    assert (workspace / "greet.py").read_text() == GREET


async def test_ambiguous_loose_match_is_refused_with_the_lines(make_agent: AgentFactory, srv: ScriptedServer,
                                                               workspace: Path) -> None:
    (workspace / "greet.py").write_text("x = 'a'\ny = 1\nx = 'a'\n")
    (out,) = await _turn(make_agent, srv, {"path": "greet.py", "old_string": 'x = "a"', "new_string": 'x = "b"'})
    assert out.startswith("error") and "2 times" in out and "1, 3" in out
    assert (workspace / "greet.py").read_text() == "x = 'a'\ny = 1\nx = 'a'\n"


async def test_replace_all_renames_within_a_file(make_agent: AgentFactory, srv: ScriptedServer,
                                                 workspace: Path) -> None:
    (out,) = await _turn(make_agent, srv, {"path": "greet.py", "old_string": "greet", "new_string": "welcome",
                                           "replace_all": True})
    assert "(2 replacements)" in out
    assert "greet" not in (workspace / "greet.py").read_text()


async def test_an_edit_that_breaks_python_syntax_is_refused(make_agent: AgentFactory, srv: ScriptedServer,
                                                            workspace: Path) -> None:
    """Asked to set TIMEOUT to 30, a small model replaced the name with the value: ``30 = 10``."""
    (workspace / "config.py").write_text("TIMEOUT = 10\n")
    (workspace / "notes.txt").write_text("TIMEOUT = 10\n")
    srv.push(tools(call("read_file", {"path": "config.py"}), call("read_file", {"path": "notes.txt"})),
             tools(call("edit_file", {"path": "config.py", "old_string": "TIMEOUT", "new_string": "30"}),
                   call("edit_file", {"path": "notes.txt", "old_string": "TIMEOUT", "new_string": "30"})),
             text("done"))
    result = await make_agent(small_model=True).run_conversation("set TIMEOUT to 30")
    py, txt = results(result)[2:]
    assert py.startswith("error: this edit was not made: it would break the Python syntax of config.py (line 1")
    assert txt.startswith("Edited notes.txt")  # not Python: the model's business
    assert (workspace / "config.py").read_text() == "TIMEOUT = 10\n" and result.failed_edits


async def test_other_models_may_pass_through_broken_python(make_agent: AgentFactory, srv: ScriptedServer,
                                                           workspace: Path) -> None:
    """A large model may break a file between two edits of a refactoring; the editor's diagnostics tell it."""
    (workspace / "config.py").write_text("TIMEOUT = 10\n")
    srv.push(tools(call("read_file", {"path": "config.py"})),
             tools(call("edit_file", {"path": "config.py", "old_string": "TIMEOUT = 10", "new_string": "def f(:"})),
             text("done"))
    result = await make_agent().run_conversation("start a function")
    assert results(result)[1].startswith("Edited config.py")
    assert (workspace / "config.py").read_text() == "def f(:\n"


CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n"


async def test_an_ambiguous_edit_offers_each_place_as_a_unique_old_string(make_agent: AgentFactory,
                                                                          srv: ScriptedServer,
                                                                          workspace: Path) -> None:
    """Told "include more surrounding lines", a small model sends the same call; given the exact text of each
    place, it copies the one it means."""
    (workspace / "calc.py").write_text(CALC)
    srv.push(tools(call("read_file", {"path": "calc.py"})),
             tools(call("edit_file", {"path": "calc.py", "old_string": "return a + b", "new_string": "return a - b"})),
             text("?"))
    out = results(await make_agent().run_conversation("fix sub"))[1]
    assert out.startswith("error: 'old_string' appears 2 times in calc.py (at lines 2, 6)")
    assert '- line 2: old_string "def add(a, b):\\n    return a + b"' in out
    assert '- line 6: old_string "def sub(a, b):\\n    return a + b"' in out


async def test_setting_a_constant_by_its_name_alone_is_refused_with_the_edit_to_send(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "config.py").write_text('NAME = "x"\nTIMEOUT = 10\n')
    srv.push(tools(call("read_file", {"path": "config.py"})),
             tools(call("edit_file", {"path": "config.py", "old_string": "TIMEOUT", "new_string": "30"})),
             tools(call("edit_file", {"path": "config.py", "old_string": "TIMEOUT = 10",
                                      "new_string": "TIMEOUT = 30"})), text("done"))
    result = await make_agent(small_model=True).run_conversation("set TIMEOUT to 30")
    refused, landed = results(result)[1:]
    assert 'Line 2 now reads "TIMEOUT = 10"; this edit would make it "30 = 10".' in refused
    assert 'To set TIMEOUT to 30, send old_string "TIMEOUT = 10" and new_string "TIMEOUT = 30".' in refused
    assert landed.startswith("Edited config.py") and not result.failed_edits


async def test_an_unread_file_is_shown_before_any_other_complaint(make_agent: AgentFactory, srv: ScriptedServer,
                                                                  workspace: Path) -> None:
    """The evaluation's bug-fix case: old_string equal to new_string on a file the model never read. It gets the
    file (and a read) first, not only "nothing to change"."""
    srv.push(tools(call("edit_file", {"path": "greet.py", "old_string": "greet", "new_string": "greet"})),
             text("?"))
    (out,) = results(await make_agent().run_conversation("fix greet"))
    assert out.startswith("error: this edit was not made: read greet.py with read_file before you edit it")
    assert '     5\t    return "Hello, " + name + "!"' in out


async def test_a_small_model_echoing_its_chat_template_writes_nothing(make_agent: AgentFactory,
                                                                      srv: ScriptedServer, workspace: Path) -> None:
    """The evaluation's docstring run: the 1.5B model sent "<tool_response>" as the file's content (over an existing
    file, a small model's write_file is refused anyway: tests/small/test_described_edit.py)."""
    srv.push(tools(call("read_file", {"path": "greet.py"})),
             tools(call("write_file", {"path": "NOTES.md", "content": "<tool_response>"}),
                   call("edit_file", {"path": "greet.py", "old_string": "import sys",
                                      "new_string": "import sys\n<tool_response>"})), text("done"))
    result = await make_agent(small_model=True).run_conversation("add a docstring")
    for out in results(result)[-2:]:
        assert out.startswith("error: the content holds '<tool_response>', a tag of the conversation's format")
    assert (workspace / "greet.py").read_text() == GREET and not result.files_changed
    assert not (workspace / "NOTES.md").exists()


async def test_a_constant_is_not_offered_as_a_chained_assignment(make_agent: AgentFactory, srv: ScriptedServer,
                                                                 workspace: Path) -> None:
    """new_string "RETRIES = 5" for old_string "RETRIES": no "RETRIES = RETRIES = 5" advice (the model copied it)."""
    (workspace / "config.py").write_text("RETRIES = 3\n")
    srv.push(tools(call("read_file", {"path": "config.py"})),
             tools(call("edit_file", {"path": "config.py", "old_string": "RETRIES", "new_string": "RETRIES = 5"})),
             text("done"))
    out = results(await make_agent(small_model=True).run_conversation("go"))[-1]
    assert out.startswith("error: this edit was not made: it would break the Python syntax")
    assert "To set" not in out and 'this edit would make it "RETRIES = 5 = 3"' in out
