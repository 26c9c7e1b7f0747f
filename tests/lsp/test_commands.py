"""A command-only client (Helix-like: no experimental capabilities, no showMessageRequest):
@agent code actions and workspace/executeCommand, with no custom server → client requests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
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


async def test_the_status_line_is_one_short_line_and_the_log_has_it_all(editor: Editor, srv: ScriptedServer,
                                                                        workspace: Path) -> None:
    """Helix shows ``window/showMessage`` raw in its one-line status bar: no tabs, no newlines, short."""
    await initialize(editor, srv, workspace, **HELIX)  # type: ignore[arg-type]
    long = ("Done:\tthe greeting\tnow shouts.\n\n```python\ndef greet(name):\n\treturn name.upper()\n```\n\n"
            + "More detail. " * 30)
    answers = [long, "short\tand\ttabbed", "```\ncode first\n```\nthen words", "word " * 100,
               "Réponse: ✓ fait\r\nligne deux"]
    srv.push(*(text(a) for a in answers))
    for n in range(len(answers)):
        await editor.workspace_execute_command_async(types.ExecuteCommandParams(
            command="agent.turn", arguments=[{"prompt": f"question {n}"}]))
    shown = [m.message for m in editor.messages]
    assert all("\n" not in m and "\t" not in m and len(m) <= 150 for m in shown), shown
    assert shown[:3] == ["agentls: Done: the greeting now shouts. (more in the log)", "agentls: short and tabbed",
                         "agentls: code first then words (more in the log)"]
    assert shown[3].startswith("agentls: word word") and shown[3].endswith("… (more in the log)")
    assert shown[4] == "agentls: Réponse: ✓ fait ligne deux"
    logged = [m.message for m in editor.log_messages]
    assert f"agentls: {long}" in logged and "agentls: short\tand\ttabbed" in logged  # the whole answers


async def test_commands_say_what_they_did_on_the_status_line(editor: Editor, srv: ScriptedServer,
                                                             workspace: Path) -> None:
    """Helix ignores executeCommand results: without ``agent/update`` each command shows a status line
    (sent before the command's answer)."""
    await initialize(editor, srv, workspace, **HELIX)  # type: ignore[arg-type]

    async def run(command: str, *arguments: Any) -> tuple[Any, list[str]]:
        before = len(editor.messages)
        result = await asyncio.wait_for(editor.workspace_execute_command_async(types.ExecuteCommandParams(
            command=command, arguments=list(arguments))), 30)
        return result, [m.message for m in editor.messages[before:]]

    fresh, shown = await run("agent.newSession")
    assert shown == [f"agentls: new session {fresh['sessionId'][:8]}"]
    assert (await run("agent.interrupt"))[1] == ["agentls: no turn was running"]
    for i in range(3):
        srv.push(text(f"answer {i} " + "words " * 50))
        await run("agent.turn", {"prompt": f"question {i} " + "context " * 50})
    report, shown = await run("agent.compress", {"preview": True, "keepLast": 1})
    assert shown == [f"agentls: compacting would take {report['messagesBefore']} → {report['messagesAfter']} "
                     f"messages, ~{report['tokensBefore']:,} → ~{report['tokensAfter']:,} tokens"]
    srv.push(text("GOAL: answers. DONE: three."))
    report, shown = await run("agent.compress", {"keepLast": 1})
    assert shown[0].startswith(f"agentls: context compacted: {report['messagesBefore']} → ")
    srv.push(text("the steer's answer"))
    outcome, shown = await run("agent.steer", {"text": "and one more thing"})
    assert outcome == {"outcome": "startedNewTurn"}
    assert shown == ["agentls: no turn was running, so your message started one"]
    await until(lambda: editor.messages[-1].message == "agentls: the steer's answer", what="the steered answer")


async def test_clients_with_updates_get_no_command_status_lines(editor: Editor, srv: ScriptedServer,
                                                                workspace: Path) -> None:
    await initialize(editor, srv, workspace)  # VS Code with experimental.agent.updates
    await editor.workspace_execute_command_async(types.ExecuteCommandParams(command="agent.newSession"))
    await editor.workspace_execute_command_async(types.ExecuteCommandParams(command="agent.interrupt"))
    assert editor.messages == []


async def test_a_command_that_fails_says_why_on_the_status_line(editor: Editor, srv: ScriptedServer,
                                                                workspace: Path) -> None:
    """Helix's ``:lsp-workspace-command agent.turn`` passes no argument, and Helix shows nothing of the
    error answer: the status line says what is missing and what to do instead."""
    from pygls.exceptions import JsonRpcException

    await initialize(editor, srv, workspace, **HELIX)  # type: ignore[arg-type]
    for command, arguments, expected in (
            ("agent.turn", None, "agentls: agent.turn needs an argument {prompt}; from an editor that cannot pass "
                                 "one, write an @agent <instruction> comment and run its code action"),
            ("agent.steer", [], "agentls: agent.steer needs an argument {text}"),
            ("agent.compress", [{"sessionId": "nope"}], "agentls: agent.compress: unknown session 'nope'"),
            ("agent.teleport", None, "agentls: workspace/executeCommand: unknown command 'agent.teleport'")):
        before = len(editor.messages)
        with pytest.raises(JsonRpcException) as info:
            await editor.workspace_execute_command_async(types.ExecuteCommandParams(command=command,
                                                                                    arguments=arguments))
        assert info.value.code == -32602
        [shown] = editor.messages[before:]
        assert shown.type == types.MessageType.Error and shown.message.startswith(expected), shown.message
        assert "\n" not in shown.message and len(shown.message) <= 150
    assert srv.requests == []  # nothing reached the model


async def test_command_errors_are_left_to_clients_with_updates(editor: Editor, srv: ScriptedServer,
                                                               workspace: Path) -> None:
    from pygls.exceptions import JsonRpcException

    await initialize(editor, srv, workspace)
    with pytest.raises(JsonRpcException):
        await editor.workspace_execute_command_async(types.ExecuteCommandParams(command="agent.turn"))
    assert editor.messages == []
