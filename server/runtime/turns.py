"""Turns of a live session, the same for both faces: one request at a time in arrival order, a steer that
missed its turn run as a follow-up inside the same request, interrupt, cancel, background turns. The rules
are in docs/architecture.md ("Faces and the runtime") and docs/acp.md / docs/protocol.md; every core turn
runs in a child task, so a stop that lands before it is under way still ends it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from agentls.agent.outcome import FileChange
from agentls.agent.result import ExitReason, TurnResult
from .live import LiveSession

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent

log = logging.getLogger("agentls.runtime")

CANCEL_GRACE = 5.0
NO_FOLLOW_UP = (ExitReason.INTERRUPTED, ExitReason.CANCELLED, ExitReason.FAILED)


class Agents(Protocol):
    """Where a session's agent comes from (the ``SessionRegistry``)."""

    async def agent(self, session: LiveSession) -> AIAgent:
        """The agent, built now if the session waited for a model; raises ``NoModel`` if it still must."""
        ...


class TurnHooks(Protocol):
    async def started(self, agent: AIAgent) -> None:
        """The request's turn is about to run (it waited for the earlier ones)."""
        ...

    async def ended(self, result: TurnResult) -> None:
        """One core turn (the prompt's or a follow-up) ended."""
        ...


class NoHooks:
    async def started(self, agent: AIAgent) -> None:
        return None

    async def ended(self, result: TurnResult) -> None:
        return None


@dataclass(frozen=True)
class TurnRun:
    """A request's turns: the prompt's, then one per follow-up."""

    results: tuple[TurnResult, ...]
    leftover_steer: str | None = None  # steers that were not run (interrupt, cancel, failure)
    cancelled: bool = False  # a cancel arrived while the request was queued or running

    @property
    def last(self) -> TurnResult:
        return self.results[-1]

    @property
    def merged(self) -> TurnResult:
        """The last result with what every turn of the request really did (files, failures, refusals), for
        the faces' end-of-turn summary (agent/footer.py)."""
        if len(self.results) == 1:
            return self.last
        rs = self.results
        return replace(self.last, files_changed=merge_changes(c for r in rs for c in r.files_changed),
                       failed_calls=tuple(c for r in rs for c in r.failed_calls),
                       refused=tuple(x for r in rs for x in r.refused),
                       failed_edits=tuple(c for r in rs for c in r.failed_edits),
                       tools_stopped=next((r.tools_stopped for r in rs if r.tools_stopped), None))


def merge_changes(changes: Iterable[FileChange]) -> tuple[FileChange, ...]:
    """One entry per file over several turns: the line counts added up."""
    merged: dict[str, FileChange] = {}
    for c in changes:
        seen = merged.get(c.path)
        merged[c.path] = c if seen is None else FileChange(
            c.path, seen.added + c.added, seen.removed + c.removed, created=seen.created and not c.deleted,
            deleted=c.deleted)
    return tuple(sorted(merged.values(), key=lambda c: c.path))


def _stopped(session: LiveSession, reason: ExitReason = ExitReason.INTERRUPTED) -> TurnResult:
    return TurnResult(session_id=session.session_id, exit_reason=reason)


async def run(sessions: Agents, session: LiveSession, prompt: Any, *, hooks: TurnHooks | None = None,
              task_id: str | None = None, runtime_context: str | None = None, echo_prompt: bool = False,
              counted: bool = False) -> TurnRun:
    """The request's turns, queued behind the session's earlier requests. Raises ``NoModel``, the core's
    ``PromptError`` and ``SessionBusy``, and ``CancelledError`` when the request itself is cancelled (the turn
    persists first)."""
    hooks = hooks or NoHooks()
    epoch = session.cancels
    if not counted:
        session.inflight += 1
    try:
        async with session.control.hold():
            if session.cancels != epoch or session.closed:
                return TurnRun((_stopped(session, ExitReason.CANCELLED),), cancelled=True)
            agent = await sessions.agent(session)
            return await _turns(session, agent, epoch, hooks, prompt, task_id, runtime_context, echo_prompt)
    finally:
        _left(session)


def _left(session: LiveSession) -> None:
    session.inflight -= 1
    if not session.busy:
        session.control.drop_steers()  # nothing is left to run them (a cancel, or a failed start)


async def _turns(session: LiveSession, agent: AIAgent, epoch: int, hooks: TurnHooks, prompt: Any,
                 task_id: str | None, runtime_context: str | None, echo_prompt: bool) -> TurnRun:
    control = session.control
    await hooks.started(agent)
    results: list[TurnResult] = []
    content, context, echo = prompt, runtime_context, echo_prompt
    while not control.interrupt_requested and session.cancels == epoch:
        result = await _core_turn(session, agent, content, task_id, context, echo)
        results.append(result)
        await hooks.ended(result)
        if control.interrupt_requested or session.cancels != epoch or result.exit_reason in NO_FOLLOW_UP:
            break
        follow_up = _joined(result.pending_steer, control.take_steer())
        if not follow_up:
            return TurnRun(tuple(results))
        content, context, echo = follow_up, None, True
    cancelled = session.cancels != epoch
    if not results:  # stopped before its first turn ran
        results.append(_stopped(session, ExitReason.CANCELLED if cancelled else ExitReason.INTERRUPTED))
    leftover = _joined(results[-1].pending_steer, control.take_steer())
    return TurnRun(tuple(results), None if cancelled else leftover, cancelled)


def _joined(*steers: str | None) -> str | None:
    return "\n\n".join(s for s in steers if s) or None


async def _core_turn(session: LiveSession, agent: AIAgent, content: Any, task_id: str | None,
                     runtime_context: str | None, echo: bool) -> TurnResult:
    task: asyncio.Task[TurnResult] = asyncio.ensure_future(agent.run_conversation(
        content, task_id=task_id, runtime_context=runtime_context, echo_prompt=echo))
    session.core_task = task
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:  # the request itself goes away: stop the turn, let it persist, go too
        agent.interrupt()
        task.cancel()
        await asyncio.wait({task}, timeout=CANCEL_GRACE)
        raise
    finally:
        session.core_task = None
    if task.cancelled():  # stopped before the core turn was under way, or the session closed
        return _stopped(session, ExitReason.CANCELLED if session.closed else ExitReason.INTERRUPTED)
    return task.result()


async def serialized(session: LiveSession, body: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``body`` in the session's turn order (no turn runs meanwhile); None if cancelled while waiting."""
    epoch = session.cancels
    session.inflight += 1
    try:
        async with session.control.hold():
            if session.cancels != epoch or session.closed:
                return None
            return await body()
    finally:
        _left(session)


def background(sessions: Agents, session: LiveSession, prompt: str, *, hooks: TurnHooks | None = None,
               report: Callable[[TurnRun | BaseException], Awaitable[None]]) -> None:
    """A turn nobody waits for (a steer on an idle session); ``report`` gets how it ended."""
    session.inflight += 1  # busy from now on: a second steer joins this turn instead of starting another
    task = asyncio.ensure_future(_background(sessions, session, prompt, hooks, report))
    session.background.add(task)
    task.add_done_callback(session.background.discard)


async def _background(sessions: Agents, session: LiveSession, prompt: str, hooks: TurnHooks | None,
                      report: Callable[[TurnRun | BaseException], Awaitable[None]]) -> None:
    try:
        done: TurnRun | BaseException = await run(sessions, session, prompt, hooks=hooks, echo_prompt=True,
                                                  counted=True)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.exception("a background turn failed")
        done = exc
    await report(done)
