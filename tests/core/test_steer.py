"""docs/loop.md §3: steering — a standalone user row after the tool results, delivered at the next tool round,
or handed back as ``pending_steer``."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from agentls.agent.scripted import RecordedRequest, ScriptedServer, call, text, tools

from .conftest import AgentFactory
from .helpers import SlowHost, Updates, check, roles, wait_until, wire_tool_results
from .helpers import text as text_of

STEER = "Also check notes.txt, please."


def _assert_steer_on_wire(req: RecordedRequest, steer: str) -> None:
    """The steer follows the tool results as user text of its own, never inside a tool result."""
    assert all(steer not in r for r in wire_tool_results(req))
    msgs = req.messages
    if req.wire == "openai":
        assert [m["role"] for m in msgs[-2:]] == ["tool", "user"]
        assert msgs[-1]["content"] == steer or text_of(msgs[-1]["content"]) == steer
    else:
        blocks: list[dict[str, Any]] = msgs[-1]["content"]
        assert msgs[-1]["role"] == "user"
        assert [b["type"] for b in blocks] == ["tool_result", "text"]
        assert blocks[-1]["text"] == steer


async def test_steer_during_tools_lands_after_the_tool_results(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, updates: Updates, tmp_path: Path,
        wire: str, stream: bool) -> None:
    host = SlowHost(workspace, updates, read_delay=0.3)
    db = tmp_path / "s.db"
    agent = make_agent(wire, stream, host=host, session_db=db)
    srv.push(tools(call("read_file", {"path": "README.md"})), text("checked both"))
    turn = asyncio.create_task(agent.run_conversation("read the README"))
    await wait_until(lambda: any(op == "read-start" for op, _, _ in host.log))
    assert agent.steer(STEER) is not False
    result = check(await asyncio.wait_for(turn, 10))
    assert roles(result.messages) == ["system", "user", "assistant", "tool", "user", "assistant"]
    assert result.messages[4]["content"] == STEER
    assert STEER not in result.messages[3]["content"]
    assert result.pending_steer is None
    _assert_steer_on_wire(srv.requests[1], STEER)
    with sqlite3.connect(db) as conn:
        stored = [r[0] for r in conn.execute("SELECT role FROM messages WHERE archived = 0 ORDER BY seq")]
    assert stored == ["user", "assistant", "tool", "user", "assistant"]


async def test_steer_while_model_thinks_is_delivered_after_the_next_tool_round(
        make_agent: AgentFactory, srv: ScriptedServer, wire: str, stream: bool) -> None:
    agent = make_agent(wire, stream)
    srv.push(tools(call("list_dir", {}), latency=0.3), text("done"))
    turn = asyncio.create_task(agent.run_conversation("look around"))
    await wait_until(lambda: len(srv.requests) == 1)
    agent.steer(STEER)
    result = check(await asyncio.wait_for(turn, 10))
    assert STEER not in srv.requests[0].raw.decode()
    _assert_steer_on_wire(srv.requests[1], STEER)
    assert roles(result.messages)[3:] == ["tool", "user", "assistant"]
    assert result.pending_steer is None


async def test_steer_when_the_turn_ends_comes_back_as_pending(make_agent: AgentFactory, srv: ScriptedServer,
                                                              wire: str, stream: bool) -> None:
    agent = make_agent(wire, stream)
    srv.push(text("final answer", latency=0.3))
    turn = asyncio.create_task(agent.run_conversation("answer me"))
    await wait_until(lambda: len(srv.requests) == 1)
    agent.steer(STEER)
    result = check(await asyncio.wait_for(turn, 10))
    assert result.pending_steer == STEER
    assert all(STEER not in str(m.get("content")) for m in result.messages)
    assert roles(result.messages) == ["system", "user", "assistant"]
    srv.push(text("handled the steer"))
    follow = check(await agent.run_conversation(result.pending_steer))
    assert follow.pending_steer is None
    assert roles(follow.messages) == ["system", "user", "assistant", "user", "assistant"]


async def test_steer_is_delivered_once(make_agent: AgentFactory, srv: ScriptedServer, workspace: Path,
                                       updates: Updates) -> None:
    host = SlowHost(workspace, updates, read_delay=0.2)
    agent = make_agent(host=host)
    srv.push(tools(call("read_file", {"path": "README.md"})), tools(call("read_file", {"path": "notes.txt"})),
             text("done"))
    turn = asyncio.create_task(agent.run_conversation("go"))
    await wait_until(lambda: bool(host.log))
    agent.steer(STEER)
    result = check(await asyncio.wait_for(turn, 10))
    assert [m["content"] for m in result.messages if m["role"] == "user"] == ["go", STEER]
    assert roles(result.messages) == ["system", "user", "assistant", "tool", "user", "assistant", "tool",
                                         "assistant"]
    assert srv.requests[2].raw.count(STEER.encode()) == 1


async def test_several_steers_in_one_round_keep_the_transcript_valid(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, updates: Updates, wire: str) -> None:
    host = SlowHost(workspace, updates, read_delay=0.3)
    agent = make_agent(wire, host=host)
    srv.push(tools(call("read_file", {"path": "README.md"})), text("done"))
    turn = asyncio.create_task(agent.run_conversation("go"))
    await wait_until(lambda: bool(host.log))
    agent.steer("first steer")
    agent.steer("second steer")
    result = check(await asyncio.wait_for(turn, 10))
    steer_rows = [m for m in result.messages[4:] if m["role"] == "user"]
    assert len(steer_rows) == 1
    assert "first steer" in steer_rows[0]["content"] and "second steer" in steer_rows[0]["content"]
    assert srv.requests[1].rejected is None


async def test_steer_during_a_parallel_batch_waits_for_the_whole_batch(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, updates: Updates) -> None:
    host = SlowHost(workspace, updates, read_delay=lambda p: 0.05 if p.name == "README.md" else 0.4)
    agent = make_agent(host=host)
    srv.push(tools(call("read_file", {"path": "README.md"}), call("read_file", {"path": "notes.txt"})),
             text("ok"))
    turn = asyncio.create_task(agent.run_conversation("go"))
    await wait_until(lambda: any(op == "read-end" for op, _, _ in host.log))
    agent.steer(STEER)
    result = check(await asyncio.wait_for(turn, 10))
    assert roles(result.messages)[2:] == ["assistant", "tool", "tool", "user", "assistant"]
    _assert_steer_on_wire(srv.requests[1], STEER)
