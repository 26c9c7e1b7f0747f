"""MCP through the ACP face: a real ``agentls acp``, the editor's ``mcpServers``, the scripted model calling
the servers' tools, permissions, prompts as slash commands, @-mentions, status and clean-up."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import pytest_asyncio
from acp import text_block

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "acp"))

from acp_harness.agent import Agent, agent_env, start_agent

from agentls.agent.scripted import ScriptedServer, call, text, tools
from tests.mcp_client.helpers import alive, lab, started_pids, time_server

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def scripted() -> AsyncIterator[ScriptedServer]:
    async with ScriptedServer() as srv:
        yield srv


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def acp(scripted: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Agent]:
    home = tmp_path_factory.mktemp("agent")
    async with start_agent(home, agent_env(scripted, home)) as agent:
        yield agent
    agent.check_frames()


def acp_entry(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """An ACP ``McpServerStdio``: ``env`` as a list of ``{name, value}``."""
    return {"name": name, "command": entry["command"], "args": entry["args"],
            "env": [{"name": "LAB", "value": "1"}]}


async def servers(agent: Agent, sid: str) -> list[dict[str, Any]]:
    listing = await agent.conn.ext_method("agentls/listMcpServers", {"sessionId": sid})
    result: list[dict[str, Any]] = listing["servers"]
    return result


async def until_settled(agent: Agent, sid: str) -> list[dict[str, Any]]:
    with anyio.fail_after(60):
        while True:
            status = await servers(agent, sid)
            if all(s["state"] != "starting" for s in status):
                return status
            await anyio.sleep(0.05)


async def test_initialize_advertises_http_and_sse(acp: Agent) -> None:
    answer = next(f for f in acp.sent() if f.get("id") is not None and "agentCapabilities" in f.get("result", {}))
    assert answer["result"]["agentCapabilities"]["mcpCapabilities"] == {"http": True, "sse": True}


async def test_servers_start_in_the_background_and_their_tools_are_used(acp: Agent, scripted: ScriptedServer,
                                                                      tmp_path: Path) -> None:
    scripted.clear()
    state = tmp_path / "state"
    ws = tmp_path / "ws"
    ws.mkdir()
    response = await acp.conn.new_session(cwd=str(ws), mcp_servers=[
        acp_entry("lab", lab("ok", state)), acp_entry("time", time_server())])
    sid = response.session_id
    # session/new answered before any server was ready: start-up is in the background.
    assert {s["state"] for s in await servers(acp, sid)} == {"starting"}
    status = await until_settled(acp, sid)
    assert [(s["name"], s["state"]) for s in status] == [("lab", "ready"), ("time", "ready")]
    assert "mcp__lab__echo" in status[0]["tools"]

    acp.client.answers.extend(["allow_always_server"])
    scripted.push(tools(call("mcp__lab__echo", {"text": "hi"}), call("mcp__time__get_current_time",
                                                                      {"timezone": "UTC"})),
                  tools(call("mcp__lab__fail", {"reason": "x"})), text("done"))
    result = await acp.conn.prompt(session_id=sid, prompt=[text_block("use the tools")])
    assert result.stop_reason == "end_turn"
    first = scripted.requests[0]
    assert {"mcp__lab__echo", "mcp__time__get_current_time", "read_file"} <= set(first.tools)
    (question,) = acp.client.permission_requests  # time is readOnlyHint; fail is covered by "every tool of lab"
    call_shown = question["toolCall"]
    assert call_shown["title"].startswith("lab: echo") and call_shown["kind"] == "other"
    assert call_shown["rawInput"] == {"server": "lab", "tool": "echo", "arguments": {"text": "hi"}}
    assert "allow_always_server" in [o["optionId"] for o in question["options"]]
    tool_results = [m for m in scripted.requests[1].messages if m["role"] == "tool"]
    assert tool_results[0]["content"] == "echo: hi" and "UTC" in tool_results[1]["content"]
    failed = [m for m in scripted.requests[2].messages if m["role"] == "tool"][-1]
    assert failed["content"].startswith("error:")
    updates = acp.client.updates[sid]
    assert any(u["sessionUpdate"] == "tool_call_update" and u.get("status") == "failed" for u in updates)
    # The editor heard about each server's state as it changed.
    metas = [u["_meta"]["agentls"]["mcpServers"] for u in updates
             if u["sessionUpdate"] == "session_info_update" and "mcpServers" in (u.get("_meta") or {}).get("agentls", {})]
    assert any(all(s["state"] == "ready" for s in m) for m in metas)

    await acp.conn.close_session(session_id=sid)
    pids = started_pids(state)
    assert pids and not any(alive(p) for p in pids)  # session close stopped every MCP child


async def test_prompts_are_slash_commands_and_resources_are_mentions(acp: Agent, scripted: ScriptedServer,
                                                                    tmp_path: Path) -> None:
    scripted.clear()
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = (await acp.conn.new_session(cwd=str(ws), mcp_servers=[acp_entry("lab", lab())])).session_id
    await until_settled(acp, sid)

    def commands() -> list[str]:
        updates = [u for u in acp.client.updates[sid] if u["sessionUpdate"] == "available_commands_update"]
        return [c["name"] for c in updates[-1]["availableCommands"]] if updates else []

    await acp.client.wait_for(lambda: "review" in commands())
    assert {"compact", "context", "help"} <= set(commands())

    scripted.push(text("reviewed"))
    result = await acp.conn.prompt(session_id=sid, prompt=[text_block("/review parser depth=deep")])
    assert result.stop_reason == "end_turn"
    assert "Please review parser (deep)." in (scripted.requests[-1].last_user_text or "")

    scripted.push(text("noted"))
    await acp.conn.prompt(session_id=sid, prompt=[text_block("what does @lab:lab://notes/today say?")])
    assert "buy milk" in str(scripted.requests[-1].messages[-1]["content"])

    await acp.conn.prompt(session_id=sid, prompt=[text_block("/review")])  # a missing argument: said, no turn
    assert "needs topic" in acp.client.text(sid)
    assert len(scripted.requests) == 2
    await acp.conn.close_session(session_id=sid)


async def test_context_shows_each_server_and_failures_do_not_stop_the_session(acp: Agent, scripted: ScriptedServer,
                                                                            tmp_path: Path) -> None:
    scripted.clear()
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = (await acp.conn.new_session(cwd=str(ws), mcp_servers=[
        acp_entry("lab", lab()), acp_entry("stuck", lab("hang")), acp_entry("gone", lab("exit"))])).session_id
    with anyio.fail_after(60):  # "stuck" stays starting (its start timeout is 30 s); the others settle
        while any(s["state"] == "starting" for s in (await servers(acp, sid))[::2]):
            await anyio.sleep(0.05)
    scripted.push(text("still works"))
    result = await acp.conn.prompt(session_id=sid, prompt=[text_block("hello")])
    assert result.stop_reason == "end_turn" and "still works" in acp.client.text(sid)
    assert "> MCP server gone failed" in acp.client.text(sid)  # said before the answer, once
    await acp.conn.prompt(session_id=sid, prompt=[text_block("/context")])
    shown = acp.client.text(sid)
    assert "`gone` (stdio): failed" in shown and "missing LAB_TOKEN" in shown
    assert "`lab` (stdio): ready, 9 tools, 1 prompt, 1 resource" in shown
    assert "`stuck` (stdio): starting" in shown
    await acp.conn.close_session(session_id=sid)  # closing stops the one still starting too


async def test_shutdown_stops_every_server(scripted: ScriptedServer, tmp_path: Path) -> None:
    home = tmp_path / "agent"
    state = tmp_path / "state"
    ws = tmp_path / "ws"
    ws.mkdir()
    async with start_agent(home, agent_env(scripted, home)) as agent:
        sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[acp_entry("a", lab("ok", state)),
                                                                       acp_entry("b", lab("flood", state))])).session_id
        await until_settled(agent, sid)
        pids = started_pids(state)
        assert len(pids) == 2 and all(alive(p) for p in pids)
    with anyio.fail_after(10):
        while any(alive(p) for p in pids):
            await anyio.sleep(0.05)


async def test_cancel_stops_a_long_mcp_call_and_load_starts_the_servers_again(acp: Agent, scripted: ScriptedServer,
                                                                           tmp_path: Path) -> None:
    scripted.clear()
    state = tmp_path / "state"
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = (await acp.conn.new_session(cwd=str(ws), mcp_servers=[acp_entry("lab", lab("ok", state))])).session_id
    await until_settled(acp, sid)
    await acp.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(call("mcp__lab__slow", {"seconds": 60})), text("never"))

    async def cancel_when_running() -> None:
        await acp.client.wait_for(lambda: any(u.get("status") == "in_progress" for u in acp.client.updates[sid]
                                              if u["sessionUpdate"] == "tool_call_update"), timeout=30)
        await acp.conn.cancel(session_id=sid)

    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_when_running)
        result = await acp.conn.prompt(session_id=sid, prompt=[text_block("sleep")])
    assert result.stop_reason == "cancelled"
    with anyio.fail_after(10):  # the server got notifications/cancelled and stopped the call
        while not (state / "cancelled").exists():
            await anyio.sleep(0.05)
    await acp.conn.close_session(session_id=sid)
    first = set(started_pids(state))
    assert not any(alive(p) for p in first)

    await acp.conn.load_session(session_id=sid, cwd=str(ws), mcp_servers=[acp_entry("lab", lab("ok", state))])
    status = await until_settled(acp, sid)
    assert status[0]["state"] == "ready" and set(started_pids(state)) - first  # a new process for the loaded session
    await acp.conn.close_session(session_id=sid)
