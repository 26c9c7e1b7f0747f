"""Prompt turns, cancellation and steering for one session.

- A prompt runs the core turn in a child task, so ``session/cancel`` can stop it in any phase: the core's
  ``interrupt()`` once the turn runs, cancelling the child task before that.
- Whatever happens (cancel, errors, the connection going away), the session's bookkeeping is reset in
  ``finally`` blocks, so the next prompt always runs (the failure of hermes-agent #79196).
- A steer that comes back as ``pending_steer`` (it arrived as the turn was ending), or that was queued
  while the turn was still starting, runs as a follow-up turn inside the same ``session/prompt``; the
  client sees it as a ``user_message_chunk`` and then the turn's updates. A cancelled prompt drops it.
- ``_session/steering`` on an idle session starts a background turn (``startedNewTurn``): its updates
  stream as usual, and there is no ``session/prompt`` response for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from acp import RequestError

from agentls.agent.prompt_blocks import PromptError
from agentls.agent.result import ExitReason, TurnResult
from agentls.server.acp.errors import internal, invalid_params

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.server.acp.session import AcpSession
    from agentls.server.acp.sessions import Sessions

log = logging.getLogger("agentls.acp")

STOP_REASONS = {ExitReason.TEXT_RESPONSE: "end_turn", ExitReason.BUDGET_EXHAUSTED: "max_turn_requests",
                ExitReason.INTERRUPTED: "cancelled", ExitReason.CANCELLED: "cancelled",
                ExitReason.EMPTY_RESPONSE: "end_turn"}
EMPTY_ANSWER = ("\n_(The model returned an empty answer. Try again, rephrase the request, or run /compact "
                "if the conversation is long.)_\n")


def stop_reason(result: TurnResult | None) -> str:
    """The ACP stop reason for a core result; raises the JSON-RPC error for a failed turn."""
    if result is None:
        return "cancelled"
    if result.failed:
        error = result.error or {"category": "unknown", "message": "the turn failed"}
        category, message = error["category"], error["message"]
        if category == "content_policy":
            return "refusal"
        data = {"category": category, "message": message}
        if category == "auth":
            raise RequestError(-32000, f"The model provider rejected the credentials: {message}", data)
        raise internal(f"The model call failed ({category}): {message}", data)
    return STOP_REASONS.get(result.exit_reason, "end_turn")


async def _run_core(session: AcpSession, agent: AIAgent, content: Any) -> TurnResult | None:
    """One core turn in a child task; None when it was cancelled before the core could answer."""
    task: asyncio.Task[TurnResult] = asyncio.ensure_future(agent.run_conversation(content))
    session.turn_task = task
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:  # our own request is going away (connection closed): stop the turn too
        agent.interrupt()
        task.cancel()
        await asyncio.wait({task}, timeout=5)
        raise
    finally:
        session.turn_task = None
    if task.cancelled():
        return None
    return task.result()


async def _turns(sessions: Sessions, session: AcpSession, content: Any, epoch: int) -> str:
    """The prompt's turn, then any follow-up turns for steers that missed it."""
    agent = await sessions.ensure_agent(session)
    session.control.begin_turn()
    if session.notice:
        notice, session.notice = session.notice, None
        await session.sink.text("\n".join(f"> {line}" for line in notice.splitlines()) + "\n\n")
    try:
        result = await _run_core(session, agent, content)
    except PromptError as exc:
        raise invalid_params(f"bad prompt: {exc}") from None
    while True:
        if session.control.epoch != epoch:
            return "cancelled"
        reason = stop_reason(result)
        if result is not None and result.exit_reason is ExitReason.EMPTY_RESPONSE:
            await session.sink.text(EMPTY_ANSWER)
        follow_up = (result.pending_steer if result is not None else None) or session.take_steers()
        if reason == "cancelled" or not follow_up:
            return reason
        await session.sink.send({"sessionUpdate": "user_message_chunk",
                                 "content": {"type": "text", "text": follow_up}})
        result = await _run_core(session, agent, follow_up)


async def serialized(session: AcpSession, body: Callable[[int], Awaitable[str]]) -> str:
    """Run ``body(epoch)`` as the session's turn: one at a time, and skipped if cancelled while waiting."""
    epoch = session.control.epoch
    session.inflight += 1
    try:
        async with session.turn_lock:
            if session.control.epoch != epoch or session.closed:
                return "cancelled"
            return await body(epoch)
    finally:
        session.inflight -= 1
        if not session.busy:
            session.queued_steers.clear()


async def prompt(sessions: Sessions, session: AcpSession, content: Any) -> str:
    return await serialized(session, lambda epoch: _turns(sessions, session, content, epoch))


def cancel(session: AcpSession) -> None:
    """Cancel everything in flight for the session; a cancel on an idle session changes nothing."""
    if not session.busy:
        return
    session.control.cancel()
    session.queued_steers.clear()
    agent = session.agent
    if agent is not None and agent.interrupt():
        return
    task = session.turn_task
    if task is not None and not task.done():
        task.cancel()  # the turn has not started running yet


def steer(sessions: Sessions, session: AcpSession, text: str, idle_behavior: str | None) -> str:
    """``injected``, ``startedNewTurn``, ``promptRequired`` (idle, when the client asked for it) or ``failed``."""
    if not text.strip() or session.closed:
        return "failed"
    agent = session.agent
    if agent is not None and agent.running and agent.steer(text):
        return "injected"
    if session.busy:  # a prompt is starting or finishing: it runs the steer as its follow-up turn
        session.queued_steers.append(text)
        return "injected"
    if idle_behavior == "promptRequired":
        return "promptRequired"
    if agent is None:
        return "failed"
    session.inflight += 1  # busy from now on, so a second steer queues behind this turn
    task = asyncio.ensure_future(_background(sessions, session, text))
    session.background.add(task)
    task.add_done_callback(session.background.discard)
    return "startedNewTurn"


async def _background(sessions: Sessions, session: AcpSession, text: str) -> None:
    try:
        await session.sink.send({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}})
    finally:
        session.inflight -= 1  # ``prompt`` counts itself in again before it first yields
    try:
        await prompt(sessions, session, text)
    except RequestError as exc:
        await session.sink.text(f"\n_(agentls: the steered turn failed: {exc})_\n")
    except Exception:
        log.exception("a steer-started turn failed")

