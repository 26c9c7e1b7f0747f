"""Finalization: close open tool sequences, hand back a pending steer, release, persist, report."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from agentls.agent.loop.state import TurnState
from agentls.agent.result import ExitReason, TurnResult
from agentls.agent.transcript import repair, violations

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent

log = logging.getLogger("agentls.loop")


async def finalize(agent: AIAgent, turn: TurnState) -> None:
    """Every step runs even if an earlier one fails; failures land in ``turn.cleanup_errors``."""
    if violations(agent.messages):
        # Only the unpersisted tail can be broken (rounds are persisted whole); rewrite if the prefix changed.
        fixed = repair(agent.messages)
        done = agent._persisted
        if fixed[:done] != agent.messages[:done]:
            agent._needs_rewrite = True
        agent.messages[:] = fixed
    close_unanswered(agent, turn)
    steps: list[tuple[str, Any]] = [
        ("persist", agent._persist(turn, final=True)),
        ("release terminals", agent.host.release(turn.task_id)),
        ("trajectory", agent._save_trajectory(turn)),
    ]
    for name, coro in steps:
        try:
            await coro
        except Exception as exc:  # cleanup never hides the result
            log.exception("finalize step %r failed", name)
            turn.cleanup_errors.append(f"{name}: {type(exc).__name__}: {exc}")


UNANSWERED = {
    ExitReason.INTERRUPTED: "(no answer: the user interrupted this turn)",
    ExitReason.CANCELLED: "(no answer: this turn was cancelled)",
    ExitReason.FAILED: "(no answer: the model call failed)",
    ExitReason.EMPTY_RESPONSE: "(no answer: the model returned only empty responses)",
    ExitReason.BUDGET_EXHAUSTED: "(no answer: the step budget ran out)",
}


def close_unanswered(agent: AIAgent, turn: TurnState) -> None:
    """A turn that ends on a user message gets a short placeholder answer, so the next user message never
    follows another one and the model can tell the earlier request went unanswered."""
    if agent.messages and agent.messages[-1].get("role") == "user":
        text = UNANSWERED.get(turn.exit_reason, "(no answer)")
        if turn.error:
            text = f"{text[:-1]}: {turn.error['category']})"
        agent.messages.append({"role": "assistant", "content": text, "meta": {"placeholder": True}})


def result(agent: AIAgent, turn: TurnState) -> TurnResult:
    outcome = turn.outcome
    return TurnResult(session_id=agent.session_id, exit_reason=turn.exit_reason, final_response=turn.final_response,
                      messages=agent.transcript(), api_calls=turn.api_calls, usage=turn.usage, error=turn.error,
                      pending_steer=agent._take_steer(), cleanup_errors=tuple(turn.cleanup_errors),
                      files_changed=outcome.files_changed(agent.root), failed_calls=outcome.failed_calls(),
                      refused=tuple(outcome.refused), failed_edits=outcome.failed_edits(),
                      last_call_failed=outcome.last_call_failed, tools_stopped=outcome.tools_stopped)
