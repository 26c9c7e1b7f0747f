"""Finalization: close open tool sequences, hand back a pending steer, release, persist, report."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from agent.loop.state import TurnState
from agent.transcript import repair, violations

if TYPE_CHECKING:
    from agent.agent import AIAgent

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


def result(agent: AIAgent, turn: TurnState) -> dict[str, Any]:
    out: dict[str, Any] = {
        "final_response": turn.final_response,
        "messages": agent.transcript(),
        "completed": turn.completed,
        "api_calls": turn.api_calls,
        "exit_reason": turn.exit_reason,
        "interrupted": turn.interrupted,
        "failed": turn.failed,
        "partial": turn.partial,
        "usage": dict(turn.usage),
        "session_id": agent.session_id,
    }
    if turn.error:
        out["error"] = dict(turn.error)
    steer = agent._take_steer()
    if steer:
        out["pending_steer"] = steer
    if turn.cleanup_errors:
        out["cleanup_errors"] = list(turn.cleanup_errors)
    return out
