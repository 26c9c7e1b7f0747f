"""What one turn returns: a typed ``TurnResult`` with one ``ExitReason`` (docs/loop.md §1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from .outcome import FailedCall, FileChange, Refusal
from .types import ErrorInfo, Message, Usage, empty_usage


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
    # What the turn did, whatever the model says (agent/outcome.py):
    files_changed: tuple[FileChange, ...] = ()  # net change of each file over the turn, with +/- line counts
    failed_calls: tuple[FailedCall, ...] = ()  # tool calls that ended in an error (refusals, made-good edits aside)
    refused: tuple[Refusal, ...] = ()  # commands and edits the permission policy or the user refused
    failed_edits: tuple[FailedCall, ...] = ()  # failed edit calls no later edit of the same file made good
    last_call_failed: bool = False  # the last tool call before the answer failed: the answer is not grounded
    tools_stopped: str | None = None  # why tool use was stopped for the rest of the turn (the loop guard)
    unmade_change: str | None = None  # a change request that changed no file: the files it asked for (loop/change_request.py)

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
        out["files_changed"] = [c.to_json() for c in self.files_changed]
        out["failed_calls"] = [c.to_json() for c in self.failed_calls]
        out["refused"] = [r.to_json() for r in self.refused]
        out["failed_edits"] = [c.to_json() for c in self.failed_edits]
        out["last_call_failed"] = self.last_call_failed
        if self.tools_stopped:
            out["tools_stopped"] = self.tools_stopped
        if self.unmade_change:
            out["unmade_change"] = self.unmade_change
        return out
