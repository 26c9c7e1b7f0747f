"""server/runtime/ on its own, without a face: queueing of requests, steers (into the turn, after it as a follow-up,
on an idle session), interrupt, cancel, close, and a turn refused with ``SessionBusy`` (server/runtime/turns.py,
docs/architecture.md). Real agents over the scripted provider, a real store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.agent import AIAgent
from agentls.agent.config import Settings
from agentls.agent.disk_host import DiskHost
from agentls.agent.host import Host
from agentls.agent.result import ExitReason, TurnResult
from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, text, tools
from agentls.agent.sessions import SessionBusy, SessionStore
from agentls.server.runtime import turns
from agentls.server.runtime.live import LiveSession, Steer
from agentls.server.runtime.registry import SessionRegistry

KEY_ENV = "AGENTLS_RUNTIME_TEST_KEY"


class Face:
    def __init__(self, srv: ScriptedServer) -> None:
        self.srv = srv

    def settings_for(self, cwd: Path) -> Settings:
        return Settings(model="m", provider="openai", base_url=self.srv.openai_url, api_key_env=KEY_ENV,
                        titles="prompt", sandbox="off", max_retries=0)

    def host_for(self, session: LiveSession) -> Host:
        return DiskHost(session.cwd)

    def mcp_servers(self) -> Any:
        return None


class Gate:
    """A responder that holds the model's answer to one prompt until ``open()``; the rest answer at once."""

    def __init__(self, srv: ScriptedServer, held: str) -> None:
        self.held = held
        self._open = asyncio.Event()
        self.answers: dict[str, Reply] = {}
        srv.set_responder(self)

    def open(self) -> None:
        self._open.set()

    async def __call__(self, req: RecordedRequest) -> Reply:
        prompt = req.last_user_text or ""
        if prompt == self.held:
            await self._open.wait()
        return self.answers.get(prompt, text(f"answer to {prompt}"))


class Hooks:
    """Records the order of events and runs ``on_ended`` once, after the first core turn ended."""

    def __init__(self, events: list[str], on_ended: Callable[[], Any] | None = None) -> None:
        self.events = events
        self.on_ended = on_ended
        self.on_started: Callable[[], Any] | None = None

    async def started(self, agent: AIAgent) -> None:
        self.events.append("started")
        if self.on_started is not None:
            self.on_started()

    async def ended(self, result: TurnResult) -> None:
        self.events.append(f"ended {result.exit_reason.value}")
        if self.on_ended is not None:
            once, self.on_ended = self.on_ended, None
            once()


@pytest.fixture
async def registry(srv: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                   ) -> AsyncIterator[SessionRegistry]:
    monkeypatch.setenv(KEY_ENV, "test-key")
    reg = SessionRegistry(Face(srv), db_path=tmp_path / "sessions.db")
    yield reg
    await reg.aclose()


@pytest.fixture
async def session(registry: SessionRegistry, tmp_path: Path) -> LiveSession:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# demo\n")
    return await registry.create(ws)


async def until(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not cond():
            await asyncio.sleep(0.005)


def prompts(srv: ScriptedServer) -> list[str | None]:
    return [r.last_user_text for r in srv.requests]


def request(registry: SessionRegistry, session: LiveSession, prompt: str, **kw: Any) -> asyncio.Task[turns.TurnRun]:
    return asyncio.ensure_future(turns.run(registry, session, prompt, **kw))


async def test_the_session_hands_its_turn_control_to_the_agent(registry: SessionRegistry, session: LiveSession,
                                                                srv: ScriptedServer) -> None:
    """One lock, one steer queue, one stop signal: what the runtime sees running is what the agent runs."""
    gate = Gate(srv, "first")
    first = request(registry, session, "first")
    await until(lambda: len(srv.requests) == 1)
    agent = session.agent
    assert agent is not None and agent.running and session.control.running and session.control.held
    assert session.control.lock.locked()
    gate.open()
    run = await first
    assert run.last.final_response == "answer to first"
    assert not session.control.running and not session.control.held and not session.control.lock.locked()


async def test_requests_queue_in_arrival_order(registry: SessionRegistry, session: LiveSession,
                                               srv: ScriptedServer) -> None:
    gate = Gate(srv, "first")
    first = request(registry, session, "first")
    await until(lambda: len(srv.requests) == 1)
    second, third = request(registry, session, "second"), request(registry, session, "third")
    await until(lambda: session.inflight == 3)
    await asyncio.sleep(0.05)
    assert prompts(srv) == ["first"]  # the others wait for the session, not for the provider
    gate.open()
    runs = await asyncio.gather(first, second, third)
    assert [r.last.final_response for r in runs] == ["answer to first", "answer to second", "answer to third"]
    assert prompts(srv) == ["first", "second", "third"]
    assert not session.busy


async def test_a_steer_after_the_turn_ended_runs_as_a_follow_up(registry: SessionRegistry, session: LiveSession,
                                                                srv: ScriptedServer) -> None:
    """The core turn is over, the request still holds the session: the steer is queued and runs as a follow-up
    turn inside the same request, before the request queued behind it."""
    Gate(srv, "")
    events: list[str] = []
    steered: list[Steer] = []
    hooks = Hooks(events, on_ended=lambda: steered.append(session.steer("also rename it")))
    first = request(registry, session, "first", hooks=hooks)
    queued = request(registry, session, "queued")
    run, after = await asyncio.gather(first, queued)
    assert steered == [Steer.INJECTED]
    assert [r.final_response for r in run.results] == ["answer to first", "answer to also rename it"]
    assert run.leftover_steer is None and not run.cancelled
    assert prompts(srv) == ["first", "also rename it", "queued"]
    assert events == ["started", "ended text_response", "ended text_response"]
    assert after.last.final_response == "answer to queued"
    history = [m.get("content") for m in (session.agent.messages if session.agent else []) if m.get("role") == "user"]
    assert history == ["first", "also rename it", "queued"]


async def test_a_steer_during_a_tool_round_rides_the_same_turn(registry: SessionRegistry, session: LiveSession,
                                                               srv: ScriptedServer) -> None:
    gate = Gate(srv, "read it")
    gate.answers["read it"] = tools(call("read_file", {"path": "README.md"}))
    first = request(registry, session, "read it")
    await until(lambda: len(srv.requests) == 1)
    assert session.steer("and say hello") is Steer.INJECTED
    gate.held = "never"
    gate.open()
    run = await first
    assert len(run.results) == 1  # taken after the tool round, not as a follow-up
    last = srv.requests[-1].messages[-1]
    assert last["role"] == "user" and "and say hello" in str(last["content"])


async def test_steers_on_an_idle_or_closed_session(registry: SessionRegistry, session: LiveSession) -> None:
    assert session.steer("hello") is Steer.IDLE  # the face decides: a background turn, or "prompt first"
    assert session.steer("   ") is Steer.FAILED
    assert not session.interrupt() and not session.cancel()  # nothing runs: nothing changes
    assert session.control.take_steer() is None
    await registry.close(session.session_id)
    assert session.steer("hello") is Steer.FAILED


async def test_interrupt_stops_the_request_and_its_follow_up_but_not_the_queued_ones(
        registry: SessionRegistry, session: LiveSession, srv: ScriptedServer) -> None:
    gate = Gate(srv, "first")
    first = request(registry, session, "first")
    await until(lambda: len(srv.requests) == 1)
    queued = request(registry, session, "queued")
    assert session.steer("a steer for later") is Steer.INJECTED
    assert session.interrupt()
    run = await first
    assert run.last.exit_reason is ExitReason.INTERRUPTED and not run.cancelled
    assert run.leftover_steer == "a steer for later"  # handed back, never run
    gate.open()
    after = await queued
    assert after.last.final_response == "answer to queued"
    assert prompts(srv)[-1] == "queued" and "a steer for later" not in prompts(srv)


async def test_an_interrupt_before_the_core_turn_starts_still_stops_it(
        registry: SessionRegistry, session: LiveSession, srv: ScriptedServer) -> None:
    Gate(srv, "")
    events: list[str] = []
    hooks = Hooks(events)
    hooks.on_started = lambda: events.append(f"interrupted {session.interrupt()}")
    run = await turns.run(registry, session, "first", hooks=hooks)
    assert events == ["started", "interrupted True"]
    assert run.last.exit_reason is ExitReason.INTERRUPTED and prompts(srv) == []


async def test_cancel_ends_the_running_and_the_queued_requests(registry: SessionRegistry, session: LiveSession,
                                                               srv: ScriptedServer) -> None:
    gate = Gate(srv, "first")
    first = request(registry, session, "first")
    await until(lambda: len(srv.requests) == 1)
    queued = request(registry, session, "queued")
    await until(lambda: session.inflight == 2)
    assert session.steer("dropped") is Steer.INJECTED
    assert session.cancel()
    run, after = await asyncio.gather(first, queued)
    gate.open()
    assert run.cancelled and run.leftover_steer is None
    assert after.cancelled and after.last.exit_reason is ExitReason.CANCELLED
    assert prompts(srv) == ["first"] and not session.busy
    assert session.control.take_steer() is None
    nxt = await turns.run(registry, session, "next")  # a cancel does not carry over to a later request
    assert nxt.last.final_response == "answer to next" and not nxt.cancelled


async def test_close_cancels_the_turn_which_persists_what_it_has(registry: SessionRegistry, session: LiveSession,
                                                                 srv: ScriptedServer, tmp_path: Path) -> None:
    Gate(srv, "first")
    first = request(registry, session, "first")
    await until(lambda: len(srv.requests) == 1)
    queued = request(registry, session, "queued")
    await until(lambda: session.inflight == 2)
    assert await registry.close(session.session_id)
    run, after = await asyncio.gather(first, queued)
    assert run.cancelled and run.last.exit_reason is ExitReason.CANCELLED
    assert after.cancelled and prompts(srv) == ["first"]
    assert session.closed and registry.find(session.session_id) is None
    assert not await registry.close(session.session_id)  # idempotent
    async with SessionStore(tmp_path / "sessions.db") as store:
        saved = await store.load_messages(session.session_id)
    assert [m.get("content") for m in saved if m.get("role") == "user"] == ["first"]


async def test_a_request_cancelled_by_its_caller_cancels_its_core_turn(
        registry: SessionRegistry, session: LiveSession, srv: ScriptedServer) -> None:
    Gate(srv, "first")
    first = request(registry, session, "first")
    await until(lambda: len(srv.requests) == 1)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert not session.busy and not session.control.held and session.core_task is None
    assert session.agent is not None and not session.agent.running and not session.control.running


async def test_a_refused_turn_hands_back_the_steer_it_accepted(registry: SessionRegistry, session: LiveSession,
                                                               srv: ScriptedServer, tmp_path: Path) -> None:
    """Another process holds the session's lease: the request raises ``SessionBusy`` with the steers the turn
    had accepted as ``pending_steer`` (the faces send them back as ``pendingSteer``); none is run."""
    Gate(srv, "")
    await turns.run(registry, session, "first")
    events: list[str] = []
    hooks = Hooks(events)
    hooks.on_started = lambda: events.append(session.steer("use the new name").value)
    async with SessionStore(tmp_path / "sessions.db") as other:
        await other.acquire_lease(session.session_id)
        with pytest.raises(SessionBusy) as refused:
            await turns.run(registry, session, "second", hooks=hooks)
        await other.release_lease(session.session_id)
    assert refused.value.pending_steer == "use the new name"
    assert events == ["started", "injected"] and prompts(srv) == ["first"]
    assert not session.busy and session.control.take_steer() is None
    again = await turns.run(registry, session, "third")
    assert again.last.final_response == "answer to third"


async def test_serialized_work_waits_for_the_turns_sent_before_it(registry: SessionRegistry, session: LiveSession,
                                                                  srv: ScriptedServer) -> None:
    gate = Gate(srv, "first")
    seen: list[Any] = []
    first = request(registry, session, "first")
    await until(lambda: len(srv.requests) == 1)

    async def body() -> str:
        agent = session.agent
        assert agent is not None
        seen.append(agent.messages[-1].get("content"))
        await agent.undo()  # takes the agent's lock: the hold lets it in
        return "done"

    work: asyncio.Task[Any] = asyncio.ensure_future(turns.serialized(session, body))
    await asyncio.sleep(0.05)
    assert seen == [] and session.inflight == 2
    gate.open()
    await first
    assert await work == "done" and seen == ["answer to first"]


async def test_a_background_turn_reports_how_it_ended(registry: SessionRegistry, session: LiveSession,
                                                      srv: ScriptedServer) -> None:
    Gate(srv, "")
    reported: list[Any] = []
    done = asyncio.Event()

    async def report(outcome: Any) -> None:
        reported.append(outcome)
        done.set()

    report_fn: Callable[[Any], Awaitable[None]] = report
    turns.background(registry, session, "from a steer", report=report_fn)
    assert session.busy and session.steer("joined") is Steer.INJECTED  # joins that turn instead of another one
    await asyncio.wait_for(done.wait(), 10)
    run = reported[0]
    assert isinstance(run, turns.TurnRun)
    assert [r.final_response for r in run.results] == ["answer to from a steer", "answer to joined"]
    await until(lambda: not session.background)
