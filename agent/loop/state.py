"""Per-turn state the phases share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentls.agent.outcome import LoopGuard, OutcomeRecorder
from agentls.agent.result import ExitReason
from agentls.agent.types import ErrorInfo, Message, Usage, empty_usage


@dataclass
class TurnState:
    task_id: str | None
    turn_index: int
    user_index: int  # index in agent.messages of this turn's user message
    runtime_context: str | None = None
    user_copy: Message | None = None  # the user message as sent, with runtime context (built once per turn)
    api_calls: int = 0
    iterations: int = 0  # model calls this turn, against the agent's own max_iterations
    usage: Usage = field(default_factory=empty_usage)
    final_response: str | None = None
    exit_reason: ExitReason = ExitReason.TEXT_RESPONSE  # set once, where the turn ends
    error: ErrorInfo | None = None
    nudged: bool = False
    empty_retries: int = 0
    continuations: int = 0
    fallback_index: int = 0  # 0: the primary model; n: fallback_models[n-1]
    cleanup_errors: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    outcome: OutcomeRecorder = field(default_factory=OutcomeRecorder)  # what the turn really did
    guard: LoopGuard = field(default_factory=LoopGuard)  # repeated identical calls stop tool use
