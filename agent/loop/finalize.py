"""Finalization: close open tool sequences, answer an unanswered user message, persist, release, record."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from .exits import Ending
from .parts import TurnParts
from .state import TurnState
from ..result import ExitReason
from ..types import Message

log = logging.getLogger("agentls.loop")

UNANSWERED = {
    ExitReason.INTERRUPTED: "(no answer: the user interrupted this turn)",
    ExitReason.CANCELLED: "(no answer: this turn was cancelled)",
    ExitReason.FAILED: "(no answer: the model call failed)",
    ExitReason.EMPTY_RESPONSE: "(no answer: the model returned only empty responses)",
    ExitReason.BUDGET_EXHAUSTED: "(no answer: the step budget ran out)",
}


async def finalize(parts: TurnParts, turn: TurnState, ending: Ending) -> None:
    """Every step runs even if an earlier one fails; failures land in ``turn.cleanup_errors``. Each step's
    coroutine is created only when it runs, so a cancellation leaves none behind un-awaited."""
    parts.conversation.repair_tail()
    close_unanswered(parts.conversation.messages, ending)
    steps: list[tuple[str, Callable[[], Awaitable[None]]]] = [
        ("persist", lambda: parts.conversation.persist(final=True)),
        ("release terminals", lambda: parts.host.release(turn.task_id)),
        ("trajectory", lambda: save_trajectory(parts, turn, ending)),
    ]
    for name, step in steps:
        try:
            await step()
        except Exception as exc:  # cleanup never hides the result
            log.exception("finalize step %r failed", name)
            error = f"{name}: {type(exc).__name__}: {exc}"
            if error not in turn.cleanup_errors:  # a save that already failed the same way during the turn
                turn.cleanup_errors.append(error)


def close_unanswered(messages: list[Message], ending: Ending) -> None:
    """A turn that ends on a user message gets a short placeholder answer, so the next user message never
    follows another one and the model can tell the earlier request went unanswered."""
    if messages and messages[-1].get("role") == "user":
        text = UNANSWERED.get(ending.reason, "(no answer)")
        if ending.error:
            text = f"{text[:-1]}: {ending.error['category']})"
        messages.append({"role": "assistant", "content": text, "meta": {"placeholder": True}})


async def save_trajectory(parts: TurnParts, turn: TurnState, ending: Ending) -> None:
    if parts.trajectory_path is None:
        return
    from ..trajectory import TrajectoryWriter

    conversation = parts.conversation
    await TrajectoryWriter(parts.trajectory_path).write(
        session_id=conversation.session_id, task_id=turn.task_id, model=parts.caller.endpoints.model,
        messages=conversation.transcript(), usage=dict(turn.calls.usage), exit_reason=ending.reason)
