"""A small model's edit said in words (agent/tools/described.py, agent/loop/rewrite.py), through real turns with
the scripted provider playing the model: ``edit_file {path, change}``, then the new text as a code block."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, text, tools
from agentls.agent.scripted.replies import error

from .conftest import GREET, AgentFactory, results


@pytest.fixture
def make_agent(make_agent: AgentFactory) -> AgentFactory:
    """The model makes the first edit here (``first_edit`` off): these are the tool's tests, through its call;
    the agent's own first edit: tests/small/test_change_requests.py."""
    return lambda **kw: make_agent(**{"first_edit": False, **kw})

DOCSTRING = GREET.replace("def greet(name):\n", 'def greet(name):\n    """Greet someone by name."""\n')
ASK = "Add a docstring to the greet function in greet.py"


def change(words: str, path: str = "greet.py") -> Reply:
    return tools(call("edit_file", {"path": path, "change": words}))


def block(body: str, lang: str = "python") -> Reply:
    return text(f"```{lang}\n{body}```")


READ = tools(call("read_file", {"path": "greet.py"}))


async def test_the_change_lands_and_the_rewrite_shares_the_transcript(make_agent: AgentFactory, srv: ScriptedServer,
                                                                      workspace: Path) -> None:
    srv.push(READ, change("add a docstring to greet"), block(DOCSTRING), text("Added the docstring."))
    result = await make_agent(small_model=True).run_conversation(ASK)
    assert (workspace / "greet.py").read_text() == DOCSTRING
    edited = results(result)[-1]
    assert edited.startswith("Edited greet.py (+1 -0 lines)") and '+    """Greet someone by name."""' in edited
    assert [(c.path, c.added, c.removed) for c in result.files_changed] == [("greet.py", 1, 0)]
    assert result.completed and not result.failed_edits
    before, rewrite, after = (r.body for r in srv.requests[-3:])
    # The rewrite is the call just made plus the instruction as its result: one shared prefix (prompt cache).
    assert rewrite["messages"][:len(before["messages"])] == before["messages"]
    assert rewrite["messages"][len(before["messages"])]["tool_calls"][0]["function"]["name"] == "edit_file"
    ask = rewrite["messages"][-1]
    assert ask["role"] == "tool" and ask["tool_call_id"] == rewrite["messages"][-2]["tool_calls"][0]["id"]
    assert ask["content"].startswith(f"greet.py (the whole file) now:\n```python\n{GREET}```\n")
    assert f"The user asked: {ASK}\nThe change: add a docstring to greet\nTo make this change, reply with the new " \
        "text of greet.py (the whole file)" in ask["content"]
    assert "stubs" not in ask["content"]  # greet.py has none
    assert rewrite["tools"] == before["tools"] and rewrite["tool_choice"] == "none" and rewrite["temperature"] == 0
    # The transcript has the edit's real result, never the instruction or the code block.
    assert after["messages"][:len(before["messages"]) + 1] == rewrite["messages"][:-1]
    assert after["messages"][-1]["content"].startswith("Edited greet.py")
    stored = json.dumps(result.messages)
    assert "To make this change" not in stored and "```python" not in stored


async def test_in_json_mode_the_model_is_shown_path_and_change_and_writes_the_code_freely(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    def j(name: str, **arguments: Any) -> Reply:
        return text(json.dumps({"name": name, "arguments": arguments}))

    srv.push(j("read_file", path="greet.py"), j("edit_file", path="greet.py", change="docstring"),
             block(DOCSTRING), j("final_answer", text="done"))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(ASK)
    assert (workspace / "greet.py").read_text() == DOCSTRING and result.final_response == "done"
    shown = srv.requests[0].body["response_format"]["json_schema"]["schema"]["anyOf"]
    edit = next(v for v in shown if v["properties"]["name"]["const"] == "edit_file")
    assert sorted(edit["properties"]["arguments"]["properties"]) == ["change", "path"]
    rewrite = srv.requests[2].body
    assert "response_format" not in rewrite and rewrite["tools"] == srv.requests[1].body["tools"]


async def test_a_rewrite_sent_back_as_a_json_call_is_still_used(make_agent: AgentFactory, srv: ScriptedServer,
                                                                 workspace: Path) -> None:
    as_json = json.dumps({"name": "write_file", "arguments": {"path": "greet.py", "content": DOCSTRING}})
    srv.push(READ, change("docstring"), text(as_json), text("done"))
    await make_agent(small_model=True).run_conversation(ASK)
    assert (workspace / "greet.py").read_text() == DOCSTRING


async def test_lines_the_rewrite_left_out_or_elided_are_kept(make_agent: AgentFactory, srv: ScriptedServer,
                                                              workspace: Path) -> None:
    """The real 1.5B model's docstring rewrite stopped after ``return``: the ``__main__`` block is kept. A
    placeholder comment for the rest of the file keeps what it stands for."""
    cut = DOCSTRING[:DOCSTRING.index("\n\nif __name__")] + "\n"
    srv.push(READ, change("docstring"), block(cut), text("done"))
    result = await make_agent(small_model=True).run_conversation(ASK)
    assert (workspace / "greet.py").read_text() == DOCSTRING
    assert "[kept lines 7-9: the rewrite left them out]" in results(result)[-1]
    (workspace / "greet.py").write_text(GREET)
    elided = 'import sys\n\n\ndef greet(name):\n    return "Hi, " + name + "!"\n\n\n# ... rest of the file unchanged\n'
    srv.push(READ, change("Hello to Hi"), block(elided), text("done"))
    result = await make_agent(small_model=True).run_conversation("In greet.py change Hello to Hi")
    assert (workspace / "greet.py").read_text() == GREET.replace("Hello", "Hi")
    assert "[kept lines 8-9: the rewrite left them out]" in results(result)[-1]


async def test_a_removal_that_was_asked_for_is_made(make_agent: AgentFactory, srv: ScriptedServer,
                                                    workspace: Path) -> None:
    cut = GREET[:GREET.index("\n\nif __name__")] + "\n"
    srv.push(READ, change("remove the __main__ block"), block(cut), text("done"))
    await make_agent(small_model=True).run_conversation("Remove the main block from greet.py")
    assert (workspace / "greet.py").read_text() == cut


async def test_an_unusable_rewrite_changes_nothing_and_says_why(make_agent: AgentFactory, srv: ScriptedServer,
                                                               workspace: Path) -> None:
    broken = GREET.replace("def greet(name):", "def greet(name)")
    cases = [(text("I added the docstring."), "the model's reply had no code block with the new text"),
             (text("```python\nimport sys\n\n\ndef greet(name):\n"), "cut off before its code block ended"),
             (block(GREET), "the rewritten greet.py is the same as before, so nothing changed"),
             (block(broken), "the rewritten greet.py would not parse (line 4")]
    for reply, why in cases:
        srv.push(READ, change("docstring"), reply, text("I could not make the change."))
        result = await make_agent(small_model=True).run_conversation(ASK)
        out = results(result)[-1]
        assert out.startswith("error: this edit was not made: ") and why in out, out
        assert (workspace / "greet.py").read_text() == GREET
        assert [f.path for f in result.failed_edits] == ["greet.py"] and not result.files_changed


async def test_a_long_file_is_rewritten_in_a_window_around_what_the_change_names(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    lines = [f"def f{i}():\n    return {i}\n\n\n" for i in range(60)]
    (workspace / "many.py").write_text("".join(lines))  # 240 lines
    seen: list[str] = []

    def respond(req: RecordedRequest) -> Reply:
        ask = str(req.body["messages"][-1]["content"])
        seen.append(ask)
        if "To make this change" in ask:
            window = ask.split("```python\n", 1)[1].split("\n```\n", 1)[0] + "\n"
            return block(window.replace("return 42", "return 4200"))
        return text("done")

    srv.push(tools(call("read_file", {"path": "many.py"})), change("make f42 return 4200", "many.py"))
    srv.set_responder(respond)
    await make_agent(small_model=True).run_conversation("In many.py, make f42 return 4200")
    assert (workspace / "many.py").read_text() == "".join(lines).replace("return 42\n", "return 4200\n")
    ask = seen[0]
    assert "many.py lines 153-202 (only these lines; the 240-line file's other lines stay as they are)" in ask
    assert "def f42():" in ask and "def f0():" not in ask and "def f59():" not in ask


async def test_a_long_file_and_a_change_that_names_nothing_in_it_asks_for_a_place(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "many.py").write_text("".join(f"x{i} = {i}\n" for i in range(200)))
    srv.push(tools(call("read_file", {"path": "many.py"})), change("make it better", "many.py"), text("sorry"))
    result = await make_agent(small_model=True).run_conversation("improve many.py")
    assert "the change names nothing in it: say which function, name or line to change" in results(result)[-1]
    assert len(srv.requests) == 3  # no rewrite was asked for


async def test_a_change_to_an_unread_file_shows_it_first_and_asks_nothing(make_agent: AgentFactory,
                                                                          srv: ScriptedServer,
                                                                          workspace: Path) -> None:
    # (not the same call twice: an identical repeat of a failed call is resampled, agent/loop/resample.py)
    srv.push(change("docstring"), change("add a docstring"), block(DOCSTRING), text("done"))
    agent = make_agent(small_model=True)
    agent_result = await agent.run_conversation("Add a docstring to greet")  # preread is off: no file named
    refused = results(agent_result)[0]
    assert refused.startswith("error: this edit was not made: read greet.py with read_file before you edit it")
    assert (workspace / "greet.py").read_text() == DOCSTRING
    assert not str(srv.requests[1].body["messages"][-1]["content"]).endswith("no JSON, no tool call.")


async def test_the_file_changed_by_someone_else_during_the_rewrite_is_not_overwritten(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    def respond(req: RecordedRequest) -> Reply:
        if str(req.body["messages"][-1]["content"]).endswith("no JSON, no tool call."):
            (workspace / "greet.py").write_text(GREET.replace("world", "there"))  # the user saved meanwhile
            return block(DOCSTRING)
        return text("done")

    srv.push(READ, change("docstring"))
    srv.set_responder(respond)
    result = await make_agent(small_model=True).run_conversation(ASK)
    out = results(result)[-1]
    assert "was not applied: the file changed since this call read it" in out, out
    assert (workspace / "greet.py").read_text() == GREET.replace("world", "there")
    assert [f.path for f in result.failed_edits] == ["greet.py"]


async def test_a_failing_model_call_is_a_failed_edit_and_the_turn_goes_on(make_agent: AgentFactory,
                                                                         srv: ScriptedServer,
                                                                         workspace: Path) -> None:
    srv.push(READ, change("docstring"), error(400, "bad request"), text("The edit failed."))
    result = await make_agent(small_model=True, max_retries=0).run_conversation(ASK)
    out = results(result)[-1]
    assert out.startswith("error: this edit was not made: the model call that writes it failed:"), out
    assert result.final_response == ("The edit failed.\n\n[agentls: no file was changed; the change asked for in "
                                     "greet.py was not made]") and (workspace / "greet.py").read_text() == GREET


async def test_an_interrupt_during_the_rewrite_stops_the_edit(make_agent: AgentFactory, srv: ScriptedServer,
                                                              workspace: Path) -> None:
    asked = anyio.Event()

    async def respond(req: RecordedRequest) -> Reply:
        asked.set()
        await anyio.sleep(30)
        return block(DOCSTRING)

    srv.push(READ, change("docstring"))
    srv.set_responder(respond)
    agent = make_agent(small_model=True)
    async with anyio.create_task_group() as tg:
        done: list[Any] = []

        async def turn() -> None:
            done.append(await agent.run_conversation(ASK))

        tg.start_soon(turn)
        await asked.wait()
        agent.interrupt()
    result = done[0]
    assert result.interrupted and results(result)[-1].startswith("error: interrupted by the user")
    assert (workspace / "greet.py").read_text() == GREET


async def test_a_line_to_add_written_over_another_keeps_both(make_agent: AgentFactory, srv: ScriptedServer,
                                                             workspace: Path) -> None:
    """The evaluation's "add a line" run: the real model's rewrite put RETRY_DELAY = 5 in place of RETRIES = 3. A
    request that only adds keeps the line it was written over; one that asks for a change does not."""
    config = 'NAME = "nimbus"\nTIMEOUT = 10\nRETRIES = 3\n'
    (workspace / "config.py").write_text(config)
    over = block('NAME = "nimbus"\nTIMEOUT = 10\nRETRY_DELAY = 5\n')
    srv.push(tools(call("read_file", {"path": "config.py"})), change("RETRY_DELAY = 5", "config.py"), over,
             text("done"))
    result = await make_agent(small_model=True).run_conversation("Add the line RETRY_DELAY = 5 at the end of config.py")
    assert (workspace / "config.py").read_text() == config + "RETRY_DELAY = 5\n"
    assert "the request only adds, and the rewrite had written over them" in results(result)[-1]
    (workspace / "config.py").write_text(config)
    srv.push(tools(call("read_file", {"path": "config.py"})), change("RETRY_DELAY = 5", "config.py"), over,
             text("done"))
    await make_agent(small_model=True).run_conversation("In config.py, replace RETRIES = 3 with RETRY_DELAY = 5")
    assert (workspace / "config.py").read_text() == 'NAME = "nimbus"\nTIMEOUT = 10\nRETRY_DELAY = 5\n'


async def test_an_added_parameter_is_a_change_of_the_line_not_a_second_line(make_agent: AgentFactory,
                                                                           srv: ScriptedServer,
                                                                           workspace: Path) -> None:
    srv.push(READ, change("add a parameter greeting"),
             block(GREET.replace("def greet(name):\n    return \"Hello, \"",
                                 "def greet(name, greeting=\"Hello\"):\n    return greeting + \", \"")),
             text("done"))
    await make_agent(small_model=True).run_conversation("Add a parameter greeting to greet in greet.py")
    text_now = (workspace / "greet.py").read_text()
    assert 'def greet(name, greeting="Hello"):\n    return greeting + ", " + name' in text_now
    assert text_now.count("def greet") == 1


async def test_a_small_models_write_file_unwraps_a_code_block_and_an_unchanged_file_is_no_error(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    srv.push(tools(call("write_file", {"path": "NOTES.md", "content": "```markdown\nRemember the milk\n```"})),
             READ, tools(call("write_file", {"path": "greet.py", "content": f"```python\n{GREET}```"})), text("done"))
    result = await make_agent(small_model=True).run_conversation("Create NOTES.md with: Remember the milk")
    assert (workspace / "NOTES.md").read_text() == "Remember the milk\n"
    same = results(result)[-1]
    assert same.startswith("greet.py already has exactly this content; nothing was written.")
    assert not result.failed_calls and (workspace / "greet.py").read_text() == GREET


def _answer_only(req: RecordedRequest) -> bool:
    variants = req.body["response_format"]["json_schema"]["schema"]["anyOf"]
    return [v["properties"]["name"]["const"] for v in variants] == ["final_answer"]


async def test_once_every_file_the_request_names_is_changed_the_next_step_answers(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    """The evaluation's rename run: the edit landed, then the model went on writing files until the loop guard
    stopped it (and made a stray file). Files named and changed: the step after the edit may only answer."""
    def j(name: str, **arguments: Any) -> Reply:
        return text(json.dumps({"name": name, "arguments": arguments}))

    (workspace / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    srv.push(j("edit_file", path="greet.py", change="Hello to Hi"), block(GREET.replace("Hello", "Hi")),
             j("edit_file", path="calc.py", change="add to plus"), text("```python\ndef plus(a, b):\n    return a + b\n```"),
             j("final_answer", text="Changed both."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(
        "In greet.py change Hello to Hi, and in calc.py rename add to plus")
    assert result.final_response == "Changed both." and len(result.files_changed) == 2
    steps = [r for r in srv.requests if "response_format" in r.body]  # the rewrites have no grammar
    assert [_answer_only(r) for r in steps] == [False, False, True]  # after greet.py: calc.py is still to do


async def test_a_crlf_file_keeps_its_line_endings_and_the_model_sees_plain_lines(make_agent: AgentFactory,
                                                                                 srv: ScriptedServer,
                                                                                 workspace: Path) -> None:
    (workspace / "greet.py").write_bytes(GREET.replace("\n", "\r\n").encode())
    srv.push(READ, change("docstring"), block(DOCSTRING), text("done"))
    await make_agent(small_model=True).run_conversation(ASK)
    assert (workspace / "greet.py").read_bytes() == DOCSTRING.replace("\n", "\r\n").encode()
    assert "\r" not in str(srv.requests[-2].body["messages"][-1]["content"])


async def test_a_window_of_very_long_lines_is_not_asked_for(make_agent: AgentFactory, srv: ScriptedServer,
                                                            workspace: Path) -> None:
    (workspace / "data.js").write_text("var data = [" + ", ".join(str(i) for i in range(9000)) + "];\n")
    srv.push(tools(call("read_file", {"path": "data.js"})), change("rename data to values", "data.js"),
             text("sorry"))
    result = await make_agent(small_model=True).run_conversation("In data.js rename data to values")
    out = results(result)[-1]
    assert "more than the model can write back; send old_string (the exact text) and new_string instead" in out
    assert len(srv.requests) == 3


async def test_the_old_text_shown_before_the_new_is_passed_over(make_agent: AgentFactory, srv: ScriptedServer,
                                                                workspace: Path) -> None:
    srv.push(READ, change("docstring"),
             text(f"The file now:\n```python\n{GREET}```\nWith the docstring:\n```python\n{DOCSTRING}```"),
             text("done"))
    await make_agent(small_model=True).run_conversation(ASK)
    assert (workspace / "greet.py").read_text() == DOCSTRING


async def test_a_request_to_change_named_files_is_not_offered_write_file(make_agent: AgentFactory,
                                                                         srv: ScriptedServer,
                                                                         workspace: Path) -> None:
    """The real model's first step after reading greet.py was often write_file with "<tool_response>" as the
    content. A request that names only existing files and asks to create nothing leaves write_file out of the
    grammar (still listed: the prompt, and its cache, stay the same)."""
    def offered(req: RecordedRequest) -> list[str]:
        return [v["properties"]["name"]["const"] for v in req.body["response_format"]["json_schema"]["schema"]["anyOf"]]

    answer = text(json.dumps({"name": "final_answer", "arguments": {"text": "ok"}}))
    cases = [("In greet.py, add a docstring to greet", False), ("Create NOTES.md with a note", True),
             ("Copy greet.py to hello.py", True), ("Add a docstring to greet", True)]
    for ask, write_file in cases:
        srv.requests.clear()
        srv.push(answer)
        await make_agent(small_model=True, tool_mode="json").run_conversation(ask)
        assert ("write_file" in offered(srv.requests[-1])) is write_file, ask
        assert any(t["function"]["name"] == "write_file" for t in srv.requests[-1].body["tools"])
