"""A command-only client (Helix-like: no experimental capabilities, no showMessageRequest):
@agent code actions and workspace/executeCommand, with no custom server → client requests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from agentls.agent.scripted import ScriptedServer, call, error, text, tools

from .conftest import helix_config, initialize, until
from .editor import Editor

# Helix 25.01's capabilities, and the config table of editors/helix/languages.toml as init options.
HELIX = {"profile": "helix", "agent": None, "options": helix_config()}
SOURCE = "def greet(name):\n    # @agent make greet shout\n    return 'hello ' + name\n"


async def code_actions(editor: Editor, uri: str, line: int, only: list[str] | None = None) -> Any:
    here = types.Position(line=line, character=0)
    return await editor.protocol.request_raw(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(start=here, end=here),
        context=types.CodeActionContext(diagnostics=[], only=only)))


def no_custom_requests(editor: Editor) -> None:
    assert editor.seen.updates == [] and editor.seen.permissions == [] and editor.seen.terminal == []


async def test_the_agent_code_action_round_trip(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, **HELIX)  # type: ignore[arg-type]
    path = workspace / "shout.py"
    path.write_text(SOURCE)
    uri = editor.open(path)
    assert not await code_actions(editor, uri, 0)
    assert not await code_actions(editor, uri, 1, only=["quickfix"])
    [action] = await code_actions(editor, uri, 1)
    assert action["title"] == "agentls: make greet shout" and action["kind"] == "refactor.rewrite"
    assert action["command"]["command"] == "agent.codeAction"
    assert action["command"]["arguments"] == [{"uri": uri, "line": 1, "instruction": "make greet shout"}]

    srv.push(tools(call("read_file", {"path": "shout.py"}),
                   call("edit_file", {"path": "shout.py", "old_string": "'hello ' + name",
                                      "new_string": "('hello ' + name).upper()"})), text("It shouts now."))
    result = await editor.workspace_execute_command_async(types.ExecuteCommandParams(
        command=action["command"]["command"], arguments=action["command"]["arguments"]))
    assert result["completed"] and result["finalResponse"] == "It shouts now."
    assert editor.text(path) == "def greet(name):\n    return ('hello ' + name).upper()\n"
    assert path.read_text() == SOURCE  # all of it went through applyEdit, nothing behind the editor's back
    first = srv.requests[0]
    assert first.last_user_text is not None and "make greet shout" in first.last_user_text
    assert "shout.py at line 2" in str(first.messages[-1]["content"]) and "return 'hello '" in \
        str(first.messages[-1]["content"])
    await until(lambda: any("It shouts now." in m.message for m in editor.messages), what="the answer")
    await until(lambda: any("It shouts now." in m.message for m in editor.log_messages), what="the log")
    no_custom_requests(editor)


async def test_a_failed_code_action_keeps_the_comment(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, **HELIX)  # type: ignore[arg-type]
    path = workspace / "shout.py"
    path.write_text(SOURCE)
    uri = editor.open(path)
    srv.push(error(401, "bad key"))
    result = await editor.workspace_execute_command_async(types.ExecuteCommandParams(
        command="agent.codeAction", arguments=[{"uri": uri, "line": 1, "instruction": "make greet shout"}]))
    assert result["failed"]
    assert editor.text(path) == SOURCE
    await until(lambda: any(m.type == types.MessageType.Error for m in editor.messages), what="the error")


async def test_execute_command_path(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, **HELIX)  # type: ignore[arg-type]

    async def run(command: str, *arguments: Any) -> Any:
        return await asyncio.wait_for(editor.workspace_execute_command_async(types.ExecuteCommandParams(
            command=command, arguments=list(arguments))), 30)

    sid = (await run("agent.newSession", {"cwd": str(workspace)}))["sessionId"]
    srv.push(text("answer one"))
    result = await run("agent.turn", {"sessionId": sid, "prompt": "first"})
    assert result["sessionId"] == sid and result["finalResponse"] == "answer one"
    await until(lambda: any(m.message == "agentls: answer one" for m in editor.messages), what="the answer")

    srv.push(text("slow", latency=30))
    turn = asyncio.ensure_future(run("agent.turn", {"sessionId": sid, "prompt": "second"}))
    await until(lambda: len(srv.requests) == 2, what="the second turn")
    assert await run("agent.steer", {"sessionId": sid, "text": "hurry"}) == {"outcome": "queued"}
    assert await run("agent.interrupt") == {"interrupted": True}  # no argument: every running turn
    assert (await turn)["interrupted"]

    srv.push(text("inline answer"))
    inline = await run("agent.turn", {"prompt": "no session id"})  # the workspace's inline session
    assert inline["finalResponse"] == "inline answer" and inline["sessionId"] != sid
    srv.push(text("SUMMARY"))
    compressed = await run("agent.compress", {"preview": True})
    assert "messagesBefore" in compressed
    fresh = await run("agent.newSession")  # no argument: a fresh inline session
    srv.push(text("fresh"))
    assert (await run("agent.turn", {"prompt": "hello"}))["sessionId"] == fresh["sessionId"]
    no_custom_requests(editor)
