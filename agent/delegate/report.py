"""What a child did, as its parent reads it: the tool result (the child's answer, then what its tool calls
really did, from its outcome record), the call's ``rawOutput``, and the card's progress (docs/loop.md §9.9)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..outcome import FailedCall, FileChange, Refusal
from ..result import ExitReason, TurnResult
from ..truncate import cap_text
from ..types import Usage, empty_usage, text_of
from .tasks import Task

_STATUS = {
    ExitReason.TEXT_RESPONSE: "done",
    ExitReason.BUDGET_EXHAUSTED: "stopped: the turn's step budget ran out",
    ExitReason.INTERRUPTED: "stopped: interrupted",
    ExitReason.CANCELLED: "stopped: cancelled",
    ExitReason.FAILED: "failed",
    ExitReason.EMPTY_RESPONSE: "failed: it kept answering with nothing",
}


@dataclass
class ChildReport:
    index: int  # 1-based, in the call's order
    task: Task
    session_id: str
    exit_reason: str  # an ExitReason value, or "error" (the child could not run)
    answer: str | None = None
    error: str | None = None
    files_changed: tuple[FileChange, ...] = ()
    failed_calls: tuple[FailedCall, ...] = ()
    refused: tuple[Refusal, ...] = ()
    usage: Usage = field(default_factory=empty_usage)
    api_calls: int = 0
    tool_calls: int = 0

    @property
    def ok(self) -> bool:
        return self.exit_reason == ExitReason.TEXT_RESPONSE.value

    def status(self) -> str:
        if self.exit_reason == "error" or (self.exit_reason == ExitReason.FAILED.value and self.error):
            return f"failed: {self.error}"
        return _STATUS.get(ExitReason(self.exit_reason), self.exit_reason)

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "goal": self.task.goal[:200], "toolsets": list(self.task.toolsets),
                "sessionId": self.session_id, "exitReason": self.exit_reason, "error": self.error,
                "answer": self.answer, "apiCalls": self.api_calls, "toolCalls": self.tool_calls,
                "usage": dict(self.usage), "filesChanged": [c.to_json() for c in self.files_changed],
                "failedCalls": [c.to_json() for c in self.failed_calls],
                "refused": [r.to_json() for r in self.refused]}


def _last_answer(result: TurnResult) -> str | None:
    """What a child that stopped early had said last (its work so far), else None."""
    for message in reversed(result.messages):
        if message.get("role") == "assistant" and text_of(message).strip():
            return text_of(message).strip()
        if message.get("role") == "user":
            return None
    return None


def from_result(index: int, task: Task, result: TurnResult, tool_calls: int) -> ChildReport:
    answer = result.final_response or _last_answer(result)
    error = result.error["message"] if result.error else None
    return ChildReport(index, task, result.session_id, result.exit_reason.value, answer, error,
                       result.files_changed, result.failed_calls, result.refused, result.usage.copy(),
                       result.api_calls, tool_calls)


def crashed(index: int, task: Task, session_id: str, exc: BaseException, tool_calls: int = 0) -> ChildReport:
    return ChildReport(index, task, session_id, "error", error=f"{type(exc).__name__}: {exc}", tool_calls=tool_calls)


def _did(report: ChildReport) -> str:
    parts = []
    for c in report.files_changed:
        how = "created, " if c.created else "deleted, " if c.deleted else ""
        parts.append(f"{c.path} ({how}+{c.added} -{c.removed})")
    line = "changed " + ", ".join(parts) if parts else "changed no file"
    line += f"; {report.tool_calls} tool call(s)"
    if report.failed_calls:
        line += "; failed: " + "; ".join(f"{f.tool}: {f.reason}" for f in report.failed_calls[:5])
    if report.refused:
        line += "; refused: " + "; ".join(f"{r.title} ({r.reason})" for r in report.refused[:5])
    return line


def result_text(reports: list[ChildReport], limit: int) -> str:
    """The tool result: per child its status, its answer (each capped at its share of ``limit``) and what it
    did. Starts with ``error:`` when a child did not finish."""
    share = max(500, limit // max(1, len(reports)) - 300)
    bad = [r for r in reports if not r.ok]
    head = ""
    if bad:
        which = ", ".join(str(r.index) for r in bad)
        head = f"error: subagent {which} of {len(reports)} did not finish ({bad[0].status()})\n\n"
    blocks = []
    for r in reports:
        goal = r.task.goal.splitlines()[0][:100]
        answer = cap_text(r.answer, share)[0] if r.answer else "(no answer)"
        blocks.append(f"## Subagent {r.index} ({r.status()}): {goal}\n{answer}\n\n"
                      f"What it did (from its tool calls, not its words): {_did(r)}")
    return head + "\n\n".join(blocks)


def progress_text(tasks: list[Task], states: list[str]) -> str:
    """The delegate card's content while the children run."""
    pairs = enumerate(zip(tasks, states, strict=True), 1)
    return "\n".join(f"{i}. {t.goal.splitlines()[0][:80]} — {s}" for i, (t, s) in pairs)
