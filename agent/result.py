"""What one turn returns: a typed ``TurnResult`` with one ``ExitReason`` (docs/loop.md §1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from agentls.agent.types import ErrorInfo, Message, Usage, empty_usage


class ExitReason(StrEnum):
    """Why a turn ended. The only place that says so: every other flag follows from it."""

    TEXT_RESPONSE = "text_response"  # the model answered in text: the turn completed
    BUDGET_EXHAUSTED = "budget_exhausted"  # the step budget ran out (after one tools-free summary call)
    INTERRUPTED = "interrupted"  # interrupt() (the user pressed stop)
    CANCELLED = "cancelled"  # the task running the turn was cancelled (the request or connection went away)
    FAILED = "failed"  # a model call failed after every recovery; ``error`` says why
    EMPTY_RESPONSE = "empty_response"  # the model kept answering with nothing


@dataclass(frozen=True)
class TurnResult:
    session_id: str
    exit_reason: ExitReason
    final_response: str | None = None
    messages: list[Message] = field(default_factory=list)  # the whole transcript, system prompt first
    api_calls: int = 0
    usage: Usage = field(default_factory=empty_usage)
    error: ErrorInfo | None = None  # set when a model call failed (also when the grace call of a spent budget did)
    pending_steer: str | None = None  # a steer that arrived after the last tool round: the caller decides
    cleanup_errors: tuple[str, ...] = ()  # finalization steps that failed (the turn's outcome stands)

    @property
    def completed(self) -> bool:
        return self.exit_reason is ExitReason.TEXT_RESPONSE

    @property
    def interrupted(self) -> bool:
        return self.exit_reason in (ExitReason.INTERRUPTED, ExitReason.CANCELLED)

    @property
    def failed(self) -> bool:
        return self.exit_reason is ExitReason.FAILED

    @property
    def partial(self) -> bool:
        """The turn ended before the model answered."""
        return not self.completed

    def to_json(self) -> dict[str, object]:
        """The result as ``agentls run --json`` prints it (snake_case; the derived flags spelled out)."""
        out: dict[str, object] = {
            "session_id": self.session_id, "exit_reason": self.exit_reason.value,
            "final_response": self.final_response, "completed": self.completed, "interrupted": self.interrupted,
            "failed": self.failed, "partial": self.partial, "api_calls": self.api_calls, "usage": dict(self.usage),
            "messages": self.messages,
        }
        if self.error is not None:
            out["error"] = dict(self.error)
        if self.pending_steer is not None:
            out["pending_steer"] = self.pending_steer
        if self.cleanup_errors:
            out["cleanup_errors"] = list(self.cleanup_errors)
        return out
