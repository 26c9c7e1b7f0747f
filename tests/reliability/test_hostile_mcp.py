"""A stdio MCP server that sends huge lines (tests/reliability/mcp_hostile_server.py): the call that got
one fails with a clear error naming the size and the limit, and the connection, the next instant call and
concurrent calls go on. On ``main`` a 60 MB answer timed out its call and the next one; 156 MB never ended."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.mcp.manager import McpManager
from agentls.agent.mcp.spec import parse_servers
from agentls.agent.mcp.stdio import LineSplitter, oversized_id
from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.tools.registry import BUILTIN_TOOLS, ToolRegistry

from .wire import server_env

SERVER = Path(__file__).resolve().parent / "mcp_hostile_server.py"
TIMEOUT = 30  # a wedged reader shows as this timeout on the instant calls


def entry(state: Path, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER), str(state)], "tool_timeout_sec": TIMEOUT, **extra}


@asynccontextmanager
async def hostile(tmp_path: Path, **extra: Any) -> AsyncIterator[McpManager]:
    specs, problems = parse_servers({"h": entry(tmp_path / "state", **extra)}, "test")
    assert problems == []
    manager = McpManager(specs, ToolRegistry(BUILTIN_TOOLS))
    manager.start()
    try:
        await manager.wait_ready()
        assert manager.status()[0]["state"] == "ready", manager.status()
        yield manager
    finally:
        await manager.aclose()


async def calls(manager: McpManager, *steps: tuple[str, dict[str, Any]]) -> list[str]:
    conn = manager.connections[0]
    return [(await conn.call_tool(name, args)).text for name, args in steps]


@pytest.mark.parametrize("size,where", [(60_000_000, "first"), (60_000_000, "last"), (20_000_000, "middle"),
                                        (156_000_000, "first")])
async def test_a_huge_answer_fails_its_call_and_the_next_call_is_instant(size: int, where: str,
                                                                         tmp_path: Path) -> None:
    async with hostile(tmp_path) as manager:
        before, huge, after = await calls(manager, ("ping", {}), ("big", {"size": size, "where": where}),
                                          ("ping", {}))
        assert before == after == "pong"
        assert huge.startswith("error: the MCP server 'h' answered big with ")
        assert f"{size + 89:,} bytes on one line; the limit is 16,777,216 bytes (max_line_bytes)" in huge \
            or f"{size + 90:,} bytes" in huge
        assert manager.status()[0]["state"] == "ready" and manager.status()[0]["restarts"] == 0


async def test_a_huge_notification_is_dropped_and_the_answer_after_it_arrives(tmp_path: Path) -> None:
    async with hostile(tmp_path) as manager:
        assert await calls(manager, ("shout", {"size": 30_000_000}), ("ping", {})) == ["pong after the shout", "pong"]


async def test_lines_under_the_cap_and_lines_in_pieces_arrive_whole(tmp_path: Path) -> None:
    async with hostile(tmp_path) as manager:
        one_mb, split = await calls(manager, ("big", {"size": 1_000_000}), ("split", {}))
        assert one_mb == "x" * 1_000_000 and split == "split split split "


async def test_a_huge_answer_does_not_hold_a_concurrent_call(tmp_path: Path) -> None:
    async with hostile(tmp_path) as manager:
        conn = manager.connections[0]
        huge, pong = await asyncio.gather(conn.call_tool("big", {"size": 100_000_000}), conn.call_tool("ping", {}))
        assert "100,000,089 bytes on one line" in huge.text and pong.text == "pong"


async def test_the_cap_is_a_setting(tmp_path: Path) -> None:
    async with hostile(tmp_path, max_line_bytes=4096) as manager:
        small, big = await calls(manager, ("big", {"size": 1000}), ("big", {"size": 10_000}))
        assert small == "x" * 1000 and "the limit is 4,096 bytes" in big
    for bad in (0, -1, "16M", True, 1 << 40):
        specs, problems = parse_servers({"h": entry(tmp_path, max_line_bytes=bad)}, "test")
        assert specs == [] and "'max_line_bytes' must be a whole number of bytes" in problems[0]


def test_the_splitter_is_linear_and_exact() -> None:
    lines = LineSplitter(10)
    assert lines.feed(b"ab") == [] and lines.feed(b"c\nde") == [b"abc"]
    assert lines.feed(b"f\n\n") == [b"def", b""]
    assert lines.feed(b"0123456789X") == [] and lines.feed(b"yz\nok\n") == [(13, b"0123456789Xyz", b"0123456789Xyz"),
                                                                            b"ok"]
    assert oversized_id(b'{"jsonrpc":"2.0","id":"a\\"b","result":', b"") == 'a\\"b'
    assert oversized_id(b'{"jsonrpc":"2.0","result":{', b'"x"},"id":7}') == 7
    assert oversized_id(b'{"jsonrpc":"2.0","result":{"id":3', b"}}", {9}) == 9  # the one waiting request
    assert oversized_id(b'{"jsonrpc":"2.0","result":{"id":3', b"}}", {8, 9}) is None
    assert oversized_id(b'{"jsonrpc":"2.0","method":"x","params":{"id":3', b"}}", {9}) is None


async def test_through_agentls_run(tmp_path: Path, srv: ScriptedServer, workspace: Path, home: Path) -> None:
    args = json.dumps([str(SERVER), str(tmp_path / "state")])
    (home / "no-config.toml").write_text(f'[mcp_servers.h]\ncommand = {json.dumps(sys.executable)}\n'
                                         f'args = {args}\ntool_timeout_sec = {TIMEOUT}\n')
    srv.push(tools(call("mcp__h__big", {"size": 60_000_000})), tools(call("mcp__h__ping", {})), text("done"))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--base-url", srv.openai_url,
        "--model", "scripted", "--no-persist", "--approval", "yolo", "go", env=server_env(home),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    results = [m["content"] for m in srv.requests[-1].messages if m["role"] == "tool"]
    assert "60,000,089 bytes on one line" in results[0] and results[1] == "pong"
