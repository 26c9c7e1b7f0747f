"""docs/loop.md §5: external cancellation persists the partial transcript (shielded), re-raises, leaks nothing."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.scripted import ScriptedServer, call, error, text, tools
from agentls.agent.sessions.store import SessionStore
from agentls.agent.transcript import violations
from agentls.agent.types import Message

from .conftest import AgentFactory
from .helpers import UNSANDBOXED, SlowHost, Updates, check, pid_alive, roles, wait_until


def _others(baseline: set[asyncio.Task[Any]]) -> set[asyncio.Task[Any]]:
    current = asyncio.current_task()
    return {t for t in asyncio.all_tasks() - baseline
            if t is not current and not t.done() and "_on_connection" not in getattr(t.get_coro(), "__qualname__", "")}


async def _stored(db: Path, session_id: str) -> list[Message]:
    async with SessionStore(db) as store:
        return await store.load_messages(session_id)


async def _cancel_when(ready: Any, task: asyncio.Task[Any], limit: float = 1.0) -> None:
    await wait_until(ready, timeout=5)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(task), 6)
    assert time.monotonic() - started < limit
    assert task.cancelled()


async def test_cancel_during_provider_call(make_agent: AgentFactory, srv: ScriptedServer, tmp_path: Path,
                                           wire: str, stream: bool) -> None:
    db = tmp_path / "s.db"
    baseline = set(asyncio.all_tasks())
    agent = make_agent(wire, stream, session_db=db)
    srv.push(tools(call("list_dir", {})), text("never", latency=5.0))
    task = asyncio.create_task(agent.run_conversation("remember this request"))
    await _cancel_when(lambda: len(srv.requests) == 2, task)
    stored = await _stored(db, agent.session_id)
    assert violations(stored) == []
    assert roles(stored) == ["user", "assistant", "tool"]
    assert stored[0]["content"] == "remember this request"
    await wait_until(lambda: srv.requests[1].client_disconnected, timeout=2)
    assert not _others(baseline), _others(baseline)
    srv.push(text("after the cancel"))
    result = check(await agent.run_conversation("next"))
    assert result.final_response == "after the cancel"


async def test_cancel_during_a_command(make_agent: AgentFactory, srv: ScriptedServer, tmp_path: Path,
                                       workspace: Path) -> None:
    db = tmp_path / "s.db"
    baseline = set(asyncio.all_tasks())
    agent = make_agent(session_db=db, approval="yolo", sandbox=UNSANDBOXED)  # $$: the host's pid only outside
    pid_file = workspace / "pid.txt"
    srv.push(tools(call("terminal", {"command": "echo $$ > pid.txt; exec sleep 30"}),
                   call("read_file", {"path": "README.md"})), text("never"))
    task = asyncio.create_task(agent.run_conversation("run it"))
    await _cancel_when(lambda: pid_file.exists() and pid_file.read_text().strip() != "", task)
    await wait_until(lambda: not pid_alive(int(pid_file.read_text())), timeout=2)
    stored = await _stored(db, agent.session_id)
    assert violations(stored) == []
    assert roles(stored) == ["user", "assistant", "tool", "tool"]
    assert all(str(m["content"]).lower().startswith(("error", "skipped")) for m in stored[2:])
    assert not _others(baseline), _others(baseline)


async def test_cancel_during_parallel_reads(make_agent: AgentFactory, srv: ScriptedServer, tmp_path: Path,
                                            workspace: Path, updates: Updates) -> None:
    db = tmp_path / "s.db"
    host = SlowHost(workspace, updates, read_delay=10.0)
    agent = make_agent(session_db=db, host=host)
    srv.push(tools(*(call("read_file", {"path": p}) for p in ("README.md", "notes.txt", "src/app.py"))))
    task = asyncio.create_task(agent.run_conversation("read"))
    await _cancel_when(lambda: len(host.log) == 3, task)
    assert host.active == 0
    stored = await _stored(db, agent.session_id)
    assert violations(stored) == [] and roles(stored) == ["user", "assistant", "tool", "tool", "tool"]


async def test_cancel_during_backoff(make_agent: AgentFactory, srv: ScriptedServer, tmp_path: Path,
                                     wire: str) -> None:
    db = tmp_path / "s.db"
    agent = make_agent(wire, session_db=db)
    srv.push(error(503, "busy", retry_after=30))
    task = asyncio.create_task(agent.run_conversation("hello"))
    await _cancel_when(lambda: len(srv.requests) == 1, task, limit=0.5)
    stored = await _stored(db, agent.session_id)
    # A turn that ends before any answer is closed with a placeholder, so two user rows never meet.
    assert roles(stored) == ["user", "assistant"] and violations(stored) == []
    assert stored[-1].get("meta", {}).get("placeholder") is True


async def test_cancelling_a_queued_caller_leaves_the_running_turn_alone(make_agent: AgentFactory,
                                                                        srv: ScriptedServer) -> None:
    agent = make_agent()
    srv.push(text("first answer", latency=0.3), text("third answer"))
    first = asyncio.create_task(agent.run_conversation("first"))
    await wait_until(lambda: len(srv.requests) == 1)
    second = asyncio.create_task(agent.run_conversation("second"))
    await asyncio.sleep(0.02)
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    assert check(await first).final_response == "first answer"
    result = check(await agent.run_conversation("third"))
    assert [m["content"] for m in result.messages if m["role"] == "user"] == ["first", "third"]


class _BlockingReleaseHost(SlowHost):
    """A host whose terminal release at the end of a turn waits until the test lets it go."""

    def __init__(self, root: Path, on_update: Any) -> None:
        super().__init__(root, on_update)
        self.releasing = asyncio.Event()
        self.go = asyncio.Event()

    async def release(self, task_id: str | None = None) -> None:
        if task_id is not None:  # the turn's own release (close() releases everything with None)
            self.releasing.set()
            await self.go.wait()


async def test_cancel_during_finalization_leaves_no_coroutine_unawaited(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, tmp_path: Path, updates: Updates) -> None:
    """A cancellation that lands in one finalization step (here: releasing terminals) must not leave the
    later steps' coroutines created and never awaited ("coroutine ... was never awaited")."""
    import gc
    import warnings

    host = _BlockingReleaseHost(workspace, updates)
    agent = make_agent(host=host, trajectory_path=tmp_path / "trajectory.jsonl")
    srv.push(text("done"))
    task = asyncio.create_task(agent.run_conversation("hi", task_id="t1"))
    await asyncio.wait_for(host.releasing.wait(), 5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        del task
        for _ in range(3):  # the cancelled task's traceback lets go of the frames a few loop steps later
            await asyncio.sleep(0.01)
            gc.collect()
    unawaited = [str(w.message) for w in caught if "never awaited" in str(w.message)]
    assert unawaited == [], unawaited
