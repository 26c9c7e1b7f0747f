"""The terminal tool: in the editor through agent/terminal/* when declared, else in-server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import initialize, new_session, request, until
from .editor import Editor


def last_tool_result(srv: ScriptedServer) -> str:
    return str([m for m in srv.requests[-1].messages if m["role"] == "tool"][-1]["content"])


async def test_commands_run_in_the_editor_terminal(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(tools(call("terminal", {"command": "echo from-the-editor; pwd; exit 3"})), text("saw it"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "run it"})
    methods = [m for m, _ in editor.seen.terminal]
    assert methods == ["create", "waitForExit", "output", "release"]
    create = editor.seen.terminal[0][1]
    assert create["sessionId"] == sid and create["command"] == "sh"
    assert create["args"] == ["-c", "echo from-the-editor; pwd; exit 3"]
    assert create["cwd"] == str(workspace) and create["outputByteLimit"] > 0
    result = last_tool_result(srv)
    assert "from-the-editor" in result and str(workspace) in result and "exit code 3" in result
    terminal_updates = [u["update"] for u in editor.seen.updates
                        if u["update"]["sessionUpdate"] == "tool_call_update"
                        and any(c.get("type") == "terminal" for c in u["update"].get("content") or [])]
    assert terminal_updates, "the tool call update points the editor at its terminal"


async def test_without_the_capability_commands_run_in_server(editor: Editor, srv: ScriptedServer,
                                                             workspace: Path) -> None:
    await initialize(editor, srv, workspace, agent={"updates": True})
    sid = await new_session(editor)
    srv.push(tools(call("terminal", {"command": "echo in-server; exit 2"})), text("ok"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "run it"})
    assert editor.seen.terminal == []
    assert "in-server" in last_tool_result(srv) and "exit code 2" in last_tool_result(srv)


async def test_in_server_commands_have_a_timeout_and_an_output_cap(editor: Editor, srv: ScriptedServer,
                                                                   workspace: Path) -> None:
    await initialize(editor, srv, workspace, agent=None, options={"toolOutputLimit": 2000})
    sid = await new_session(editor)
    srv.push(tools(call("terminal", {"command": "yes line | head -c 200000; sleep 30", "timeout": 1})), text("ok"))
    loop = asyncio.get_running_loop()
    start = loop.time()
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "run it"})
    assert loop.time() - start < 10
    result = last_tool_result(srv)
    assert "timed out after 1s" in result
    assert len(result) < 10_000


async def test_editor_terminal_timeout_kills_then_releases(editor: Editor, srv: ScriptedServer,
                                                           workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(tools(call("terminal", {"command": "sleep 30", "timeout": 1})), text("ok"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "run it"})
    assert [m for m, _ in editor.seen.terminal] == ["create", "waitForExit", "kill", "output", "release"]
    assert "timed out" in last_tool_result(srv)


async def test_interrupt_kills_and_releases_the_editor_terminal(editor: Editor, srv: ScriptedServer,
                                                                workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(tools(call("terminal", {"command": "sleep 30"})), text("ok"))
    turn = asyncio.ensure_future(request(editor, "agent/turn", {"sessionId": sid, "prompt": "run it"}))
    await until(lambda: ("waitForExit" in [m for m, _ in editor.seen.terminal]), what="the command to start")
    await request(editor, "agent/interrupt", {"sessionId": sid})
    result = await asyncio.wait_for(turn, 10)
    assert result["interrupted"]
    methods = [m for m, _ in editor.seen.terminal]
    assert methods[-2:] == ["kill", "release"] and editor.terminals == {}
