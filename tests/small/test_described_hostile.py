"""What a confused rewrite may not cost the user (agent/tools/described.py, agent/tools/fences.py, docs/loop.md §9.8):
a README's own code blocks, a reply of only the changed line, a window the model wrote past, numbered data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, text, tools
from agentls.agent.tools.described import RewriteRefused, Window, extract, restore, rewritten, window_for
from agentls.agent.tools.fences import unfenced

from .conftest import GREET, AgentFactory, results


@pytest.fixture
def make_agent(make_agent: AgentFactory) -> AgentFactory:
    """The model makes the first edit here (``first_edit`` off): these are the tool's tests, through its call;
    the agent's own first edit: tests/small/test_change_requests.py."""
    return lambda **kw: make_agent(**{"first_edit": False, **kw})

README = ("# Tool\n\nIntro.\n\n## Install\n\n```bash\npip install tool\n```\n\n## Usage\n\n```\ntool run\n```\n\n"
          "## License\n\nMIT\n")
NO_LICENSE = README[:README.index("\n## License")]


def _instruction(req: RecordedRequest) -> str | None:
    ask = str(req.body["messages"][-1]["content"])
    return ask if ask.endswith("no JSON, no tool call.") else None


@pytest.mark.parametrize("fence", ["````", "```"])
async def test_a_readme_with_code_blocks_keeps_them_and_a_removal_removes_only_what_was_asked(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, fence: str) -> None:
    """The README's first inner ``` used to end the rewrite's block: with "remove" asked, the file was cut to
    its first 6 lines and the edit reported done. The README is shown in a ```` block; a model that answers
    with ``` anyway is read right as long as its inner blocks that open have a language."""
    readme = README.replace("```\ntool run", "```sh\ntool run") if fence == "```" else README
    (workspace / "README.md").write_text(readme)
    asked: list[str] = []

    def respond(req: RecordedRequest) -> Reply:
        ask = _instruction(req)
        if ask is None:
            return text("done")
        asked.append(ask)
        return text(f"{fence}markdown\n{readme[:readme.index(chr(10) + '## License')]}{fence}")

    srv.push(tools(call("read_file", {"path": "README.md"})),
             tools(call("edit_file", {"path": "README.md", "change": "remove the License section"})))
    srv.set_responder(respond)
    result = await make_agent(small_model=True).run_conversation("Remove the License section from README.md")
    assert (workspace / "README.md").read_text() == readme[:readme.index("\n## License")]
    assert "in one ```` code block" in asked[0] and f"````markdown\n{readme}````" in asked[0]
    assert results(result)[-1].startswith("Edited README.md (+0 -4 lines)")


@pytest.mark.parametrize("reply", [
    f"````markdown\n{README}````", f"Here:\n````\n{README}````\nDone.", f"~~~markdown\n{README}~~~",
    json.dumps({"name": "write_file", "arguments": {"path": "README.md", "content": README}}),
    json.dumps({"name": "final_answer", "arguments": {"text": f"````markdown\n{README}````"}}),
])
def test_a_text_with_code_blocks_comes_back_whole(reply: str) -> None:
    assert extract(reply, "old") == README


def test_a_nested_reply_cut_off_is_refused_not_cut_at_an_inner_block() -> None:
    cut = f"````markdown\n{README[:README.index('## Usage')]}"
    with pytest.raises(RewriteRefused, match="cut off"):
        extract(cut, README)
    sh = README.replace("```\ntool run", "```sh\ntool run")
    with pytest.raises(RewriteRefused, match="cut off"):
        extract(f"```markdown\n{sh[:sh.index('## License')]}", sh)


def test_a_block_closed_on_its_last_line_and_inline_fences_in_prose() -> None:
    assert extract("```python\na = 1\nb = 2```") == "a = 1\nb = 2\n"
    assert extract("Use ```x``` like this:\n```python\na = 1\n```") == "a = 1\n"


def test_numbered_data_keeps_its_numbers_copied_read_file_numbers_go() -> None:
    tsv = "1\tapple\n2\tbanana\n3\tcherry\n"
    assert extract(f"```\n{tsv}4\tdate\n```", tsv) == tsv + "4\tdate\n"
    assert extract("```\n     1\tx = 1\n     2\ty = 2\n```", "x = 0\ny = 2\n") == "x = 1\ny = 2\n"


def test_a_markdown_file_that_is_one_code_block_is_written_as_sent() -> None:
    snippet = "```python\nprint('hi')\n```\n"
    assert unfenced(snippet, ".md") == snippet
    assert unfenced("```markdown\n# Notes\n```", ".md") == "# Notes\n"
    assert unfenced(snippet, ".py") == "print('hi')\n"
    assert unfenced(f"````markdown\n{README}````", ".md") == README


@pytest.mark.parametrize("old, written, asked, want", [
    ("a = 1\nb = 2\n", "b = 3\n", "set b to 3", "a = 1\nb = 3\n"),
    ("HOST = 'x'\nPORT = 80\nC = 10\nD = 4\nE = 5\n", "C = 30\n", "set C to 30",
     "HOST = 'x'\nPORT = 80\nC = 30\nD = 4\nE = 5\n"),
    ("def f():\n    x = 1\n    y = 2\n    return x + y\n\n\nprint(f())\n", "    y = 3\n    return x * y\n",
     "make y 3 and multiply", "def f():\n    x = 1\n    y = 3\n    return x * y\n\n\nprint(f())\n"),
])
def test_a_reply_of_only_the_changed_lines_changes_those_lines(old: str, written: str, asked: str, want: str) -> None:
    """Written over the wrong line (``b = 3`` over ``a = 1``), or over the whole file, with "done" reported."""
    assert restore(old, written, asked)[0] == want


def test_a_comment_of_the_file_that_reads_like_a_placeholder_does_not_undo_a_removal() -> None:
    old = "x = 1\n# rest of the config below\ny = 2\nz = 3\n"
    assert restore(old, "x = 1\n# rest of the config below\n", "remove y and z")[0] == \
        "x = 1\n# rest of the config below\n"


def test_a_block_rewritten_as_one_line_gets_no_stray_closer_but_a_dropped_function_is_kept() -> None:
    stub = "exports.abbreviate = (words) => {\n  throw new Error('implement me');\n};\n"
    one_line = "exports.abbreviate = (words) => words.split(' ').map((w) => w[0]).join('');\n"
    assert restore(stub, one_line, "Implement the stub in acronym.js")[0] == one_line
    two = "const a = () => {\n  return 1;\n};\nconst b = () => {\n  return 2;\n};\n"
    first_only = "const a = () => {\n  return 3;\n};\n"  # stopped after the first of two: b is kept
    assert restore(two, first_only, "make a return 3")[0] == first_only + "const b = () => {\n  return 2;\n};\n"


def test_an_empty_file_gets_a_final_newline() -> None:
    assert restore("", "x = 1\n", "add x = 1")[0] == "x = 1\n"


def _long() -> str:
    return "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(60))


@pytest.mark.parametrize("before, after", [(4, 0), (0, 3), (152, 38)])
def test_lines_written_past_the_window_are_not_doubled(before: int, after: int) -> None:
    text = _long()
    window = window_for(text, "make f42 return 4200", "")
    lines = text.splitlines(keepends=True)
    written = "".join(lines[window.start - before:window.end + after]).replace("return 42\n", "return 4200\n")
    new, _ = rewritten(text, window, written, "make f42 return 4200", "", Path("m.py"))
    assert new == text.replace("return 42\n", "return 4200\n")


def test_a_window_whose_edge_repeats_the_line_next_to_it_keeps_it() -> None:
    lines = tuple(f"x{i} = {i}\n" for i in range(10)) + ("y = 0\n", "y = 0\n") + tuple(f"z{i} = {i}\n" for i in range(10))
    window = Window(11, 16, lines)  # starts at the second "y = 0"
    text = "".join(lines)
    written = window.text.replace("z1 = 1", "z1 = 100")
    assert rewritten(text, window, written, "remove nothing, set z1 to 100", "", Path("m.py"))[0] == \
        text.replace("z1 = 1\n", "z1 = 100\n")
    rows = tuple(["x\n"] * 30 + ["}\n"] * 30 + ["x\n"] * 30)  # data that repeats at both edges
    edges = Window(20, 70, rows)
    assert rewritten("".join(rows), edges, edges.text, "remove y", "", Path("d.txt"))[0] == "".join(rows)
    changed = edges.text.replace("}\n", "{\n", 1)
    assert rewritten("".join(rows), edges, changed, "remove y", "", Path("d.txt"))[0] == \
        "".join(rows).replace("}\n", "{\n", 1)


async def test_a_reply_of_only_the_changed_line_through_a_turn(make_agent: AgentFactory, srv: ScriptedServer,
                                                               workspace: Path) -> None:
    config = "HOST = 'localhost'\nPORT = 8080\nTIMEOUT = 10\nRETRIES = 3\nDEBUG = False\n"
    (workspace / "config.py").write_text(config)
    srv.push(tools(call("read_file", {"path": "config.py"})),
             tools(call("edit_file", {"path": "config.py", "change": "set TIMEOUT to 30"})),
             text("```python\nTIMEOUT = 30\n```"), text("done"))
    result = await make_agent(small_model=True).run_conversation("In config.py set TIMEOUT to 30")
    assert (workspace / "config.py").read_text() == config.replace("TIMEOUT = 10", "TIMEOUT = 30")
    assert results(result)[-1].startswith("Edited config.py (+1 -1 lines)")


async def test_a_small_models_new_markdown_file_that_is_one_code_block_keeps_its_fence(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    snippet = "```python\nprint('hi')\n```\n"
    srv.push(tools(call("write_file", {"path": "example.md", "content": snippet})), text("done"))
    await make_agent(small_model=True).run_conversation("Create example.md with a python block that prints hi")
    assert (workspace / "example.md").read_text() == snippet


async def test_a_rewrite_for_one_of_several_calls_answers_every_call_of_the_message(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    """The rewrite's request ends the assistant message's calls with its instruction: the calls after it, not
    run yet, were left without a result (an API like OpenAI's refuses such a request)."""
    (workspace / "a.py").write_text("A = 1\n")
    (workspace / "b.py").write_text("B = 1\n")

    def respond(req: RecordedRequest) -> Reply:
        ask = str(req.body["messages"][-1]["content"])
        if ask.endswith("no JSON, no tool call."):
            return text("```python\nA = 2\n```" if "a.py" in ask.split("\n")[0] else "```python\nB = 2\n```")
        return text("done")

    srv.push(tools(call("read_file", {"path": "a.py"}), call("read_file", {"path": "b.py"})),
             tools(call("edit_file", {"path": "a.py", "change": "set A to 2"}),
                   call("edit_file", {"path": "b.py", "change": "set B to 2"})))
    srv.set_responder(respond)
    result = await make_agent(small_model=True).run_conversation("Set A to 2 in a.py and B to 2 in b.py")
    assert (workspace / "a.py").read_text() == "A = 2\n" and (workspace / "b.py").read_text() == "B = 2\n"
    rewrites = [r.body["messages"] for r in srv.requests if _instruction(r)]
    assert len(rewrites) == 2
    for messages in rewrites:
        at = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        asked = [c["id"] for c in messages[at]["tool_calls"]]
        answered = [m["tool_call_id"] for m in messages[at + 1:]]
        assert sorted(answered) == sorted(asked) and messages[-1]["content"].endswith("no JSON, no tool call.")
    assert [r.split(" (")[0] for r in results(result)[-2:]] == ["Edited a.py", "Edited b.py"]
    assert "not run yet" not in json.dumps(result.messages)  # the stand-ins are never stored


@pytest.mark.parametrize("ask", ["In greet.py, strip whitespace from the name before greeting",
                                 "In greet.py, make greet work without a name"])
async def test_strip_and_without_are_no_removal_a_cut_off_rewrite_keeps_the_rest(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, ask: str) -> None:
    """The real model's rewrite stops after ``return``; "strip" (``.strip()``) or "without" counted as a request
    to remove something, so the ``__main__`` block it left out was not put back."""
    cut = 'import sys\n\n\ndef greet(name):\n    return "Hello, " + name.strip() + "!"\n'
    srv.push(tools(call("read_file", {"path": "greet.py"})),
             tools(call("edit_file", {"path": "greet.py", "change": "call strip on name"})),
             text(f"```python\n{cut}```"), text("done"))
    await make_agent(small_model=True).run_conversation(ask)
    assert (workspace / "greet.py").read_text() == GREET.replace("name +", "name.strip() +", 1)


@pytest.mark.parametrize("reply", [
    "```diff\n-name = 'demo'\n+name = 'prod'\n```", "```diff\n+name = 'prod'\n```",
    "```toml\n [tool]\n-name = 'demo'\n+name = 'prod'\n version = '1.0'\n```",
    "```\n@@ -2 +2 @@\n-name = 'demo'\n+name = 'prod'\n```"])
def test_a_diff_is_not_the_new_text(reply: str) -> None:
    """A small model may answer with a diff: it was written as the file, ``-`` and ``+`` lines and all."""
    with pytest.raises(RewriteRefused, match="replied with a diff"):
        extract(reply, "[tool]\nname = 'demo'\nversion = '1.0'\n")
    assert extract(f"{reply}\nThe whole file:\n```toml\n[tool]\nname = 'prod'\n```", "x") == "[tool]\nname = 'prod'\n"


def test_a_file_that_looks_like_a_diff_or_a_list_is_still_rewritten() -> None:
    patch = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    assert extract(f"```diff\n{patch.replace('+b', '+c')}```", patch) == patch.replace("+b", "+c")
    todo = "- milk\n- eggs\n"
    assert extract(f"```markdown\n{todo}- bread\n```", todo) == todo + "- bread\n"
    assert extract("```markdown\n# List\n\n- milk\n+ eggs\n```", "# List\n\n- milk\n") == "# List\n\n- milk\n+ eggs\n"


def test_a_reply_as_an_old_string_edit_is_applied_not_written_as_the_file() -> None:
    """{"old_string": "8080", "new_string": "9090"} as the reply: the file became "9090"."""
    old = "[server]\nhost = 'localhost'\nport = 8080\nlog = 'info'\n"

    def edit(o: str, n: str) -> str:
        return json.dumps({"name": "edit_file", "arguments": {"path": "c.toml", "old_string": o, "new_string": n}})

    assert extract(edit("8080", "9090"), old) == old.replace("8080", "9090")
    for unusable in (edit("8081", "9090"), edit("'", '"'), edit("", "x")):  # absent, not unique, empty
        with pytest.raises(RewriteRefused, match="no code block"):
            extract(unusable, old)


CONFIG = 'NAME = "nimbus"\nTIMEOUT = 10\nRETRIES = 3\n'


@pytest.mark.parametrize("old, written, asked, want", [
    (CONFIG, "RETRY_DELAY = 5\n", "Add the line RETRY_DELAY = 5 at the end", CONFIG + "RETRY_DELAY = 5\n"),
    (CONFIG, 'NAME = "nimbus"\nRETRY_DELAY = 5\n', "Add the line RETRY_DELAY = 5 at the end",
     CONFIG + "RETRY_DELAY = 5\n"),
    ("import sys\n\n\ndef f():\n    return sys.argv\n", "import os\n", "Add import os at the top of f.py",
     "import os\nimport sys\n\n\ndef f():\n    return sys.argv\n"),
    ("a = 1\nb = 2\nc = 3\n", "a = 1\nc = 3\nd = 4\n", "append d = 4", "a = 1\nb = 2\nc = 3\nd = 4\n"),
])
def test_a_request_that_only_adds_loses_nothing_to_a_partial_reply(old: str, written: str, asked: str,
                                                                   want: str) -> None:
    """The evaluation's RETRY_DELAY case again, with a reply of only the new line (or the lines around it):
    ``RETRIES = 3`` it stood for, ``import sys``, a single line left out in the middle, were lost."""
    assert restore(old, written, asked)[0] == want


async def test_a_line_added_as_the_only_line_of_the_reply_through_a_turn(make_agent: AgentFactory,
                                                                         srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "config.py").write_text(CONFIG)
    srv.push(tools(call("read_file", {"path": "config.py"})),
             tools(call("edit_file", {"path": "config.py", "change": "add RETRY_DELAY = 5"})),
             text("```python\nRETRY_DELAY = 5\n```"), text("done"))
    result = await make_agent(small_model=True).run_conversation("Add the line RETRY_DELAY = 5 at the end of config.py")
    assert (workspace / "config.py").read_text() == CONFIG + "RETRY_DELAY = 5\n"
    assert results(result)[-1].startswith("Edited config.py (+1 -0 lines)")
