"""What one turn returns: a typed ``TurnResult`` with one ``ExitReason`` (docs/loop.md §1)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
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
class TurnResult(Mapping[str, object]):
    """Typed, and also a read-only mapping of the documented keys to their JSON values (docs/loop.md §1.5):
    ``r["final_response"]``, ``r.get("partial")``, ``"messages" in r``, ``json.dumps(dict(r))``."""

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
    tests_failing: str | None = None  # the tests agentls ran after the change still fail: "x_test.py (2 of 9 tests failed)"

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

    # ----- the mapping view -------------------------------------------------------------------
    def __getitem__(self, key: str) -> object:
        try:
            value = _VIEW[key]
        except (KeyError, TypeError):
            raise KeyError(key) from None
        return value(self)

    def __iter__(self) -> Iterator[str]:
        return iter(_VIEW)

    def __len__(self) -> int:
        return len(_VIEW)

    def to_json(self) -> dict[str, object]:
        """The result as ``agentls run --json`` prints it: the mapping view without the optional keys that are
        unset (``error``, ``pending_steer``, ``cleanup_errors``, ``tools_stopped``, ``unmade_change``, ``tests_failing``)."""
        return {key: value(self) for key, value in _VIEW.items() if key not in _OPTIONAL or _OPTIONAL[key](self)}


# Every key of the mapping view, in the order ``agentls run --json`` prints them, with its JSON value.
_VIEW: dict[str, Callable[[TurnResult], object]] = {
    "session_id": lambda r: r.session_id,
    "exit_reason": lambda r: r.exit_reason.value,
    "final_response": lambda r: r.final_response,
    "completed": lambda r: r.completed,
    "interrupted": lambda r: r.interrupted,
    "failed": lambda r: r.failed,
    "partial": lambda r: r.partial,
    "api_calls": lambda r: r.api_calls,
    "usage": lambda r: dict(r.usage),
    "messages": lambda r: r.messages,
    "error": lambda r: None if r.error is None else dict(r.error),
    "pending_steer": lambda r: r.pending_steer,
    "cleanup_errors": lambda r: list(r.cleanup_errors),
    "files_changed": lambda r: [c.to_json() for c in r.files_changed],
    "failed_calls": lambda r: [c.to_json() for c in r.failed_calls],
    "refused": lambda r: [x.to_json() for x in r.refused],
    "failed_edits": lambda r: [c.to_json() for c in r.failed_edits],
    "last_call_failed": lambda r: r.last_call_failed,
    "tools_stopped": lambda r: r.tools_stopped,
    "unmade_change": lambda r: r.unmade_change,
    "tests_failing": lambda r: r.tests_failing,
}
_OPTIONAL: dict[str, Callable[[TurnResult], object]] = {
    "error": lambda r: r.error is not None, "pending_steer": lambda r: r.pending_steer is not None,
    "cleanup_errors": lambda r: r.cleanup_errors, "tools_stopped": lambda r: r.tools_stopped,
    "unmade_change": lambda r: r.unmade_change, "tests_failing": lambda r: r.tests_failing,
}
