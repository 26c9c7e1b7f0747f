"""docs/loop.md §1: the public interface (construction, lazy setup, close, history, result shape, chat)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import socket
import threading
from pathlib import Path
from typing import Any

from agentls.agent.agent import AIAgent
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import AgentFactory
from .helpers import check, roles, tool_msgs, wait_until


def _fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def _own_threads() -> int:
    """Threads other than the shared worker pools of anyio and asyncio (they outlive any one agent)."""
    return sum(1 for t in threading.enumerate()
               if t.name != "AnyIO worker thread" and not t.name.startswith("asyncio_"))


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _foreign_tasks(baseline: set[asyncio.Task[Any]]) -> set[asyncio.Task[Any]]:
    """Tasks that are not the test's, the baseline's or the scripted server's connection handlers."""
    current = asyncio.current_task()
    return {t for t in asyncio.all_tasks() - baseline
            if t is not current and not t.done() and "_on_connection" not in getattr(t.get_coro(), "__qualname__", "")}


async def test_construction_opens_nothing(tmp_path: Path, workspace: Path) -> None:
    """``__init__`` stores configuration only: no socket, thread, task, file or directory appears."""
    db = tmp_path / "data" / "sessions.db"
    tree = _tree(workspace)
    fds, threads, tasks = _fds(), threading.active_count(), set(asyncio.all_tasks())
    agent = AIAgent(model="m", base_url=_closed_port_url(), api_key="k", workspace=workspace, session_db=db,
                    fallback_models=["other"], approval="yolo")
    assert _fds() == fds
    assert threading.active_count() == threads
    assert set(asyncio.all_tasks()) == tasks
    assert not db.parent.exists()
    assert _tree(workspace) == tree
    await agent.close()
    await agent.close()
    assert not db.parent.exists() and _fds() == fds


async def test_async_with_sets_up_lazily_and_close_releases_everything(
        srv: ScriptedServer, tmp_path: Path, workspace: Path) -> None:
    """``async with`` runs the same setup as the first turn (the database opens, no model call); leaving the
    block closes the HTTP client and the database: fds and threads go back to where they were."""
    db = tmp_path / "sessions.db"
    fds, threads = _fds(), _own_threads()
    tasks = set(asyncio.all_tasks())
    async with AIAgent(model="m", base_url=srv.openai_url, api_key="k", workspace=workspace,
                       session_db=db) as agent:
        assert db.exists()
        assert srv.requests == []
        srv.push(tools(call("read_file", {"path": "README.md"})), text("read it"))
        result = check(await agent.run_conversation("what is in the README?"))
        assert result.final_response == "read it"
    await agent.close()  # idempotent, also after __aexit__
    await wait_until(lambda: _fds() == fds and _own_threads() == threads, timeout=3)
    await wait_until(lambda: not _foreign_tasks(tasks), timeout=2)


async def test_close_is_idempotent_and_leaves_no_task(srv: ScriptedServer, tmp_path: Path,
                                                      workspace: Path) -> None:
    tasks = set(asyncio.all_tasks())
    agent = AIAgent(model="m", base_url=srv.openai_url, api_key="k", workspace=workspace,
                    session_db=tmp_path / "s.db")
    srv.push(text("hi"))
    check(await agent.run_conversation("hello"))
    await asyncio.gather(agent.close(), agent.close())
    await agent.close()
    assert not _foreign_tasks(tasks), _foreign_tasks(tasks)


async def test_result_shape(make_agent: AgentFactory, srv: ScriptedServer, wire: str, stream: bool) -> None:
    srv.push(tools(call("read_file", {"path": "notes.txt"}), call("list_dir", {})), text("done"))
    agent = make_agent(wire, stream)
    result = check(await agent.run_conversation("look around"))
    assert result.final_response == "done"
    assert result.completed is True and result.exit_reason == "text_response"
    assert result.interrupted is False and result.failed is False and result.partial is False
    assert result.api_calls == 2
    assert result.error is None and result.pending_steer is None and result.cleanup_errors == ()
    assert result.session_id == agent.session_id
    usage = result.usage
    assert all(isinstance(usage[k], int) for k in ("prompt_tokens", "completion_tokens", "cached_tokens"))
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert roles(result.messages) == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [m["content"] for m in result.messages[1:2]] == ["look around"]
    assert "line 10" in tool_msgs(result)[0]["content"]


async def test_never_mutates_caller_history(make_agent: AgentFactory, srv: ScriptedServer, wire: str) -> None:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "earlier question"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a's content"},
        {"role": "assistant", "content": "earlier answer"},
        {"role": "assistant", "content": "a duplicate assistant row"},
    ]
    snapshot = copy.deepcopy(history)
    ids = [id(m) for m in history]
    srv.push(tools(call("read_file", {"path": "README.md"})), text("ok"))
    result = check(await make_agent(wire).run_conversation("next", conversation_history=history))
    assert history == snapshot and [id(m) for m in history] == ids
    result.messages.clear()  # the caller owning the result must not reach into the agent either
    srv.push(text("again"))
    assert history == snapshot


async def test_result_messages_are_a_copy(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    """Demanding reading of "messages (the full transcript)": editing a returned list never changes the
    agent's own transcript, so the next turn is unaffected."""
    agent = make_agent()
    srv.push(text("one"), text("two"))
    first = check(await agent.run_conversation("first"))
    first.messages.append({"role": "user", "content": "injected"})
    second = check(await agent.run_conversation("second"))
    assert "injected" not in [m.get("content") for m in second.messages]
    assert roles(second.messages) == ["system", "user", "assistant", "user", "assistant"]


async def test_chat_returns_final_response(make_agent: AgentFactory, srv: ScriptedServer, stream: bool) -> None:
    agent = make_agent(stream=stream)
    srv.push(text("pong"), tools(call("list_dir", {})), text("second answer"))
    assert await agent.chat("ping") == "pong"
    assert await agent.chat("list it") == "second answer"


async def test_compress_from_another_task_during_a_turn_returns(make_agent: AgentFactory,
                                                                srv: ScriptedServer) -> None:
    """``compress()`` may be called from another task while a turn runs. Demanding reading: the call
    returns (at the next safe boundary or when the turn ends), even if the turn ends on its first reply."""
    agent = make_agent()
    srv.push(text("a slow answer", latency=0.3))
    turn = asyncio.create_task(agent.run_conversation("hi"))
    await wait_until(lambda: len(srv.requests) == 1)
    preview = asyncio.create_task(agent.compress(preview=True))
    check(await asyncio.wait_for(turn, 5))
    report = await asyncio.wait_for(preview, 2)
    assert isinstance(report, dict)


async def test_compress_queued_during_a_turn_that_is_cancelled_still_returns(make_agent: AgentFactory,
                                                                             srv: ScriptedServer) -> None:
    """A compression asked for during a turn that is then cancelled runs after it: it never ends with the
    turn's cancellation (through a face that was a request left unanswered for good)."""
    agent = make_agent()
    srv.push(text("a slow answer", latency=5), text("summary"))
    turn = asyncio.create_task(agent.run_conversation("hi"))
    await wait_until(lambda: len(srv.requests) == 1)
    queued = asyncio.create_task(agent.compress(preview=True))
    await wait_until(lambda: bool(agent._parts.compactor._queued))
    turn.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await turn
    report = await asyncio.wait_for(queued, 10)
    assert isinstance(report, dict)
    assert not agent._parts.compactor._queued


async def test_cleanup_failure_still_returns_the_result(make_agent: AgentFactory, srv: ScriptedServer,
                                                        workspace: Path) -> None:
    """``cleanup_errors`` appears when finalization fails; the result still comes back whole."""
    from agentls.agent.disk_host import DiskHost

    class BrokenRelease(DiskHost):
        async def release(self, task_id: str | None = None) -> None:
            raise RuntimeError("terminal pool is gone")

    srv.push(tools(call("list_dir", {})), text("done anyway"))
    result = check(await make_agent(host=BrokenRelease(workspace)).run_conversation("go"))
    assert result.final_response == "done anyway" and result.completed
    assert any("terminal pool is gone" in e for e in result.cleanup_errors)
