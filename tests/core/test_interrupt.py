"""docs/loop.md §5: ``interrupt()`` during a provider call, during tools and during a backoff."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.scripted import ScriptedServer, call, error, stall, text, tools

from .conftest import AgentFactory
from .helpers import UNSANDBOXED, SlowHost, Updates, check, pid_alive, roles, tool_msgs, wait_until


def _assert_interrupted(result: dict[str, Any]) -> None:
    check(result)
    assert result.interrupted is True and result.exit_reason == "interrupted"
    assert result.completed is False and result.failed is False


async def _interrupt_when(agent: Any, ready: Any, task: asyncio.Task[dict[str, Any]],
                          limit: float) -> dict[str, Any]:
    await wait_until(ready, timeout=5)
    started = time.monotonic()
    agent.interrupt()
    result: dict[str, Any] = await asyncio.wait_for(task, 5)
    elapsed = time.monotonic() - started
    assert elapsed < limit, f"the turn took {elapsed * 1000:.0f} ms to stop after interrupt()"
    return result


SLOW_REPLIES = {"latency": text("too late", latency=5.0), "stall": stall(5.0, content="partial then nothing")}


@pytest.mark.parametrize("kind", SLOW_REPLIES)
async def test_interrupt_during_provider_call_aborts_within_100ms(
        make_agent: AgentFactory, srv: ScriptedServer, wire: str, stream: bool, kind: str) -> None:
    agent = make_agent(wire, stream)
    srv.push(SLOW_REPLIES[kind])
    turn = asyncio.create_task(agent.run_conversation("take your time"))
    result = await _interrupt_when(agent, lambda: len(srv.requests) == 1, turn, 0.1)
    _assert_interrupted(result)
    assert roles(result.messages)[:2] == ["system", "user"]
    await wait_until(lambda: srv.requests[0].client_disconnected, timeout=2)
    assert len(srv.requests) == 1


async def test_interrupt_during_a_command_kills_it_and_skips_the_rest(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, stream: bool) -> None:
    agent = make_agent(stream=stream, approval="yolo", sandbox=UNSANDBOXED)  # $$: the host's pid only outside
    pid_file = workspace / "pid.txt"
    srv.push(tools(call("terminal", {"command": "echo $$ > pid.txt; exec sleep 30"}),
                   call("write_file", {"path": "after.txt", "content": "should not exist"})), text("never"))
    turn = asyncio.create_task(agent.run_conversation("run the long thing"))
    result = await _interrupt_when(agent, lambda: pid_file.exists() and pid_file.read_text().strip() != "",
                                   turn, 1.0)
    _assert_interrupted(result)
    pid = int(pid_file.read_text())
    await wait_until(lambda: not pid_alive(pid), timeout=2)
    ran, skipped = (r["content"] for r in tool_msgs(result))
    assert "interrupt" in ran.lower()
    assert "skipped" in skipped.lower()
    assert not (workspace / "after.txt").exists()
    assert len(srv.requests) == 1


async def test_interrupt_during_a_parallel_batch(make_agent: AgentFactory, srv: ScriptedServer, workspace: Path,
                                                 updates: Updates) -> None:
    host = SlowHost(workspace, updates, read_delay=10.0)
    agent = make_agent(host=host)
    srv.push(tools(call("read_file", {"path": "README.md"}), call("read_file", {"path": "notes.txt"}),
                   call("todo", {"items": [{"content": "x", "status": "pending"}]}),
                   call("list_dir", {})), text("never"))
    turn = asyncio.create_task(agent.run_conversation("go"))
    result = await _interrupt_when(agent, lambda: len(host.log) == 2, turn, 0.5)
    _assert_interrupted(result)
    contents = [r["content"].lower() for r in tool_msgs(result)]
    assert len(contents) == 4
    assert all("interrupt" in c for c in contents[:2])
    assert all("skipped" in c for c in contents[2:])
    assert agent.plan == []


@pytest.mark.parametrize("retry_after", [30.0, None])
async def test_interrupt_during_backoff_returns_at_once(make_agent: AgentFactory, srv: ScriptedServer,
                                                        wire: str, retry_after: float | None) -> None:
    agent = make_agent(wire, retry_base_delay=30.0, retry_max_delay=60.0)
    srv.push(error(429, "slow down", retry_after=retry_after), text("too late"))
    turn = asyncio.create_task(agent.run_conversation("hurry"))
    await wait_until(lambda: len(srv.requests) == 1)
    await asyncio.sleep(0.1)  # now in the backoff sleep
    result = await _interrupt_when(agent, lambda: True, turn, 0.1)
    _assert_interrupted(result)
    assert len(srv.requests) == 1


async def test_agent_works_normally_after_an_interrupt(make_agent: AgentFactory, srv: ScriptedServer,
                                                       wire: str) -> None:
    """The interrupted user turn stays; the next turn must still give a valid transcript (no two user
    messages in a row), and the model must accept the request."""
    agent = make_agent(wire)
    srv.push(text("too late", latency=5.0))
    turn = asyncio.create_task(agent.run_conversation("first request"))
    _assert_interrupted(await _interrupt_when(agent, lambda: len(srv.requests) == 1, turn, 0.5))
    srv.push(text("second answer"))
    result = check(await agent.run_conversation("second request"))
    assert result.completed and result.final_response == "second answer"
    assert srv.requests[-1].rejected is None


async def test_interrupt_when_idle_does_not_poison_the_next_turn(make_agent: AgentFactory,
                                                                 srv: ScriptedServer) -> None:
    agent = make_agent()
    agent.interrupt()
    srv.push(tools(call("list_dir", {})), text("fine"))
    result = check(await agent.run_conversation("go"))
    assert result.completed and not result.interrupted


async def test_interrupt_in_a_later_round_keeps_the_finished_rounds(make_agent: AgentFactory,
                                                                   srv: ScriptedServer, wire: str) -> None:
    agent = make_agent(wire)
    srv.push(tools(call("read_file", {"path": "README.md"})), text("never", latency=5.0))
    turn = asyncio.create_task(agent.run_conversation("go"))
    result = await _interrupt_when(agent, lambda: len(srv.requests) == 2, turn, 0.1)
    _assert_interrupted(result)
    assert roles(result.messages) == ["system", "user", "assistant", "tool"]
    assert "Demo project" in tool_msgs(result)[0]["content"]


async def test_request_after_an_interrupted_turn_never_has_two_user_messages(make_agent: AgentFactory,
                                                                             srv: ScriptedServer) -> None:
    """Demanding reading of §3 "never two user messages in a row": it holds for what the model is sent too
    (the request is a view of the transcript), not only for the transcript after finalization."""
    agent = make_agent("openai")
    srv.push(text("too late", latency=5.0))
    turn = asyncio.create_task(agent.run_conversation("first request"))
    _assert_interrupted(await _interrupt_when(agent, lambda: len(srv.requests) == 1, turn, 0.5))
    srv.push(text("second answer"))
    check(await agent.run_conversation("second request"))
    sent = [m["role"] for m in srv.requests[-1].messages]
    assert all(not (a == b == "user") for a, b in itertools.pairwise(sent)), sent
