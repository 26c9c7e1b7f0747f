"""MCP: what servers cost a session's start, and what one MCP tool call costs through the loop.

1. **Start-up stays in the background.** The time from sending ``session/new`` (ACP) or
   ``agent/newSession`` (LSP) to its answer, with three MCP servers configured (the lab server of
   tests/mcp_client, stdio) beside the same request with none, alternating, in one ``agentls`` process
   per face. Before each next request the servers of the last session have settled (polled with
   ``listMcpServers``) and the session is closed, so their start-up does not slow the next measurement.
   Target: at most 20 ms added.
2. **A tool call through the loop.** In this process: the median time of one ``call_tool("echo")`` on
   the lab server with the SDK's ``Client`` (the direct call), beside the extra time of a turn that calls
   ``mcp__lab__echo`` over a turn that calls the built-in ``todo`` tool (both two model calls to the
   scripted provider, yolo, no persistence). The difference between the two is agentls' own cost per
   MCP call (the adapter, the permission check, the result mapping).

``python -m bench.mcp [--quick] [--json]``
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Row, cli, fmt_ms, median, ms
from bench.rpc import Peer, agentls_command, lsp_initialize_params, lsp_shutdown
from bench.startup import child_env

LAB = Path(__file__).resolve().parent.parent / "tests" / "mcp_client" / "servers" / "lab.py"
TARGET_ADDED_MS = 20.0


def _servers(state: Path) -> list[dict[str, Any]]:
    return [{"name": f"lab{i}", "command": sys.executable, "args": [str(LAB), "ok", str(state)], "env": []}
            for i in range(3)]


async def _settle(peer: Peer, method: str, sid: str) -> None:
    for _ in range(1200):
        listing = await peer.request(method, {"sessionId": sid}, timeout=30)
        if all(s["state"] != "starting" for s in listing["servers"]):
            return
        await asyncio.sleep(0.05)


async def _acp(tmp: Path, repeats: int) -> tuple[list[float], list[float]]:
    env = {**child_env(tmp), "AGENTLS_MODEL": "bench:1", "AGENTLS_BASE_URL": "http://127.0.0.1:9/v1",
           "AGENTLS_API_KEY_ENV": "AGENTLS_BENCH_KEY", "AGENTLS_CONFIG": str(tmp / "none.toml")}
    peer = await Peer.spawn([*agentls_command(), "acp"], "ndjson", env=env, cwd=tmp, inherit_env=False)
    none: list[float] = []
    three: list[float] = []
    try:
        await peer.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}, timeout=60)
        await peer.request("session/new", {"cwd": str(tmp), "mcpServers": []}, timeout=60)  # warm: SDK, core
        for i in range(repeats * 2 + 1):
            with_servers = i % 2 == 1
            t0 = time.monotonic()
            answer = await peer.request("session/new", {"cwd": str(tmp), "mcpServers": _servers(tmp / "state")
                                                        if with_servers else []}, timeout=60)
            took = time.monotonic() - t0
            sid = answer["sessionId"]
            if i:  # the first one warms the MCP path up (the SDK import happens in the background)
                (three if with_servers else none).append(took)
            await _settle(peer, "_agentls/listMcpServers", sid)
            await peer.request("session/close", {"sessionId": sid}, timeout=60)
    finally:
        await peer.close(timeout=15)
    return none, three


async def _lsp(tmp: Path, repeats: int) -> tuple[list[float], list[float]]:
    options = {"model": "bench:1", "baseUrl": "http://127.0.0.1:9/v1", "apiKeyEnv": "AGENTLS_BENCH_KEY"}
    env = {**child_env(tmp), "AGENTLS_CONFIG": str(tmp / "none.toml")}
    peer = await Peer.spawn([*agentls_command(), "lsp"], "lsp", env=env, cwd=tmp, inherit_env=False)
    peer.on_request = lambda method, params: None
    none: list[float] = []
    three: list[float] = []
    try:
        await peer.request("initialize", lsp_initialize_params(tmp, options), timeout=60)
        peer.notify("initialized", {})
        await peer.request("agent/newSession", {"cwd": str(tmp)}, timeout=60)
        for i in range(repeats * 2 + 1):
            with_servers = i % 2 == 1
            params: dict[str, Any] = {"cwd": str(tmp)}
            if with_servers:
                params["mcpServers"] = _servers(tmp / "state")
            t0 = time.monotonic()
            answer = await peer.request("agent/newSession", params, timeout=60)
            took = time.monotonic() - t0
            if i:
                (three if with_servers else none).append(took)
            await _settle(peer, "agent/listMcpServers", answer["sessionId"])
    finally:
        await peer.close(lambda: lsp_shutdown(peer), timeout=20)
    return none, three


def _start_rows(face: str, request: str, none: list[float], three: list[float]) -> Row:
    added = ms(median(three) - median(none))
    return Row(f"MCP: {request} ({face}) with 3 servers configured", fmt_ms(ms(median(three))),
               baseline=f"{fmt_ms(ms(median(none)))} with none", ratio=f"{added:+.1f} ms",
               target=f"≤ +{TARGET_ADDED_MS:g} ms", ok=added <= TARGET_ADDED_MS)


async def _direct(repeats: int) -> list[float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    times = []
    async with Client(stdio_client(StdioServerParameters(command=sys.executable, args=[str(LAB), "ok"]))) as client:
        await client.call_tool("echo", {"text": "warm"})
        for _ in range(repeats):
            t0 = time.monotonic()
            await client.call_tool("echo", {"text": "x"})
            times.append(time.monotonic() - t0)
    return times


async def _loop(tmp: Path, repeats: int) -> tuple[list[float], list[float]]:
    from agentls.agent.agent import AIAgent
    from agentls.agent.mcp.manager import McpManager
    from agentls.agent.mcp.spec import parse_servers
    from agentls.agent.scripted import ScriptedServer, call, text, tools

    specs, _ = parse_servers({"lab": {"command": sys.executable, "args": [str(LAB), "ok"]}}, "bench")
    mcp_turns: list[float] = []
    todo_turns: list[float] = []
    async with ScriptedServer(strict=False) as srv:
        agent = AIAgent(model="bench", base_url=srv.openai_url, api_key="k", workspace=tmp, approval="yolo",
                        titles="prompt", stream=False)
        manager = McpManager(specs, agent.registry)
        manager.start()
        try:
            async with agent:
                await manager.wait_ready()
                for i in range(repeats * 2 + 2):
                    mcp_call = i % 2 == 0
                    srv.push(tools(call("mcp__lab__echo", {"text": "x"}) if mcp_call else
                                   call("todo", {"items": [{"content": "x", "status": "pending"}]})), text("ok"))
                    t0 = time.monotonic()
                    await agent.run_conversation("go")
                    took = time.monotonic() - t0
                    if i >= 2:
                        (mcp_turns if mcp_call else todo_turns).append(took)
        finally:
            await manager.aclose()
    return mcp_turns, todo_turns


def run(quick: bool) -> list[Row]:
    repeats = 5 if quick else 15
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="agentls-bench-mcp-") as raw:
        tmp = Path(raw)
        none, three = asyncio.run(_acp(tmp, repeats))
        rows.append(_start_rows("ACP", "session/new", none, three))
        none, three = asyncio.run(_lsp(tmp, repeats))
        rows.append(_start_rows("LSP", "agent/newSession", none, three))
        direct = asyncio.run(_direct(repeats * 4))
        mcp_turns, todo_turns = asyncio.run(_loop(tmp, repeats * 2))
    through = ms(median(mcp_turns) - median(todo_turns))
    rows.append(Row("MCP: one tool call, direct SDK call_tool (lab echo, stdio)", fmt_ms(ms(median(direct)), 2)))
    rows.append(Row("MCP: one tool call through the loop (turn with it − turn with todo)", fmt_ms(through, 2),
                    baseline=f"{fmt_ms(ms(median(direct)), 2)} direct",
                    ratio=f"{through - ms(median(direct)):+.2f} ms"))
    return rows


if __name__ == "__main__":
    sys.exit(cli("mcp", run))
