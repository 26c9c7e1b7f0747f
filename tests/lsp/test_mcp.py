"""MCP through the LSP face: ``initializationOptions.mcpServers`` and ``agent/newSession``'s, the tools
called by the scripted model with the permission prompt, ``agent/listMcpServers``, MCP prompts as
``/commands`` with ``available_commands_update``, and no server left after shutdown."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agentls.agent.scripted import ScriptedServer, call, text, tools
from tests.mcp_client.helpers import alive, lab, started_pids, time_server

from .conftest import initialize, new_session, request, until, update_kinds
from .editor import Editor


async def settled(editor: Editor, session_id: str) -> list[dict[str, Any]]:
    for _ in range(1200):
        listing = await request(editor, "agent/listMcpServers", {"sessionId": session_id})
        if all(s["state"] != "starting" for s in listing["servers"]):
            return list(listing["servers"])
        await asyncio.sleep(0.05)
    raise AssertionError("the MCP servers never settled")


async def test_servers_from_both_sources_and_their_tools(editor: Editor, srv: ScriptedServer, workspace: Path,
                                                         tmp_path: Path) -> None:
    state = tmp_path / "state"
    result = await initialize(editor, srv, workspace, options={"approval": "ask",
                                                               "mcpServers": {"time": time_server()}})
    methods = result.capabilities.experimental["agent"]["methods"]  # type: ignore[index]
    assert "agent/listMcpServers" in methods
    sid = await new_session(editor, mcpServers=[{"name": "lab", **lab("ok", state), "env": []}])
    listing = await request(editor, "agent/listMcpServers", {"sessionId": sid})
    assert [s["state"] for s in listing["servers"]] == ["starting", "starting"]  # newSession did not wait
    status = await settled(editor, sid)
    assert [(s["name"], s["state"]) for s in status] == [("time", "ready"), ("lab", "ready")]

    editor.permission_answer = "allow_always"
    srv.push(tools(call("mcp__lab__echo", {"text": "one"})), tools(call("mcp__lab__echo", {"text": "two"}),
                                                                    call("mcp__time__get_current_time",
                                                                         {"timezone": "UTC"})), text("done"))
    answer = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "echo twice"}, 60)
    assert answer["completed"] and answer["finalResponse"] == "done"
    (asked,) = editor.seen.permissions  # "always allow this tool" covered the second echo; time is read-only
    assert asked["toolCall"]["rawInput"] == {"server": "lab", "tool": "echo", "arguments": {"text": "one"}}
    assert [o["optionId"] for o in asked["options"]][:3] == ["allow_once", "allow_always", "allow_always_server"]
    tool_texts = [m["content"] for m in srv.requests[-1].messages if m["role"] == "tool"]
    assert tool_texts[:2] == ["echo: one", "echo: two"] and "UTC" in tool_texts[2]

    # MCP prompts are the session's slash commands.
    assert "available_commands_update" in update_kinds(editor, sid)
    last = [u["update"] for u in editor.seen.updates if u["update"]["sessionUpdate"] == "available_commands_update"]
    assert [c["name"] for c in last[-1]["availableCommands"]] == ["review"]
    srv.push(text("reviewed"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "/review the parser"})
    assert "Please review the parser (short)." in (srv.requests[-1].last_user_text or "")
    try:
        await request(editor, "agent/turn", {"sessionId": sid, "prompt": "/review"})
        raise AssertionError("a prompt without its argument ran")
    except JsonRpcInvalidParams as exc:
        assert "needs topic" in str(exc)

    pids = started_pids(state)
    await editor.shutdown_session()
    for _ in range(200):
        if not any(alive(p) for p in pids):
            break
        await asyncio.sleep(0.05)
    assert pids and not any(alive(p) for p in pids)


async def test_bad_mcp_params_are_rejected(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    try:
        await new_session(editor, mcpServers="lab")
        raise AssertionError("accepted")
    except JsonRpcInvalidParams as exc:
        assert "mcpServers" in str(exc)
    sid = await new_session(editor, mcpServers={"broken": {"args": []}, "gone": {"command": "/no/such/server"}})
    listing = await request(editor, "agent/listMcpServers", {"sessionId": sid})
    assert [s["name"] for s in listing["servers"]] == ["gone"] and "needs a 'command'" in listing["problems"][0]
    await until(lambda: any("MCP server gone failed" in m.message for m in editor.messages), 30, "the warning")
