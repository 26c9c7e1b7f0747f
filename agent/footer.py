"""The one-line summary of what a turn did, for ``agentls run``'s footer and the editors' end of turn.

It comes from the ``TurnResult``'s outcome record (agent/outcome.py), never from the model's words:

    changed: greet.py +1 −1
    no files changed; 3 tool calls failed; 1 command refused (approval: auto-edit)
    changed: notes.txt +2 −0; the last tool call failed
"""

from __future__ import annotations

from collections import Counter

from .outcome import FileChange
from .result import ExitReason, TurnResult

MAX_FILES_SHOWN = 8


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _change(c: FileChange) -> str:
    if c.deleted:
        return f"{c.path} (deleted)"
    if c.created:
        return f"{c.path} (new, +{c.added})"
    return f"{c.path} +{c.added} \u2212{c.removed}"


def footer(result: TurnResult) -> str:
    parts: list[str] = []
    changes = result.files_changed
    if changes:
        shown = ", ".join(_change(c) for c in changes[:MAX_FILES_SHOWN])
        more = f" and {len(changes) - MAX_FILES_SHOWN} more" if len(changes) > MAX_FILES_SHOWN else ""
        parts.append(f"changed: {shown}{more}")
    else:
        parts.append("no files changed")
    if result.failed_calls:
        parts.append(f"{_plural(len(result.failed_calls), 'tool call')} failed")
    for (action, reason), n in Counter((r.action, r.reason) for r in result.refused).items():
        parts.append(f"{_plural(n, action)} refused ({reason})")
    if result.failed_edits:
        names = sorted({f.path or f.tool for f in result.failed_edits})
        parts.append(f"edit not made: {', '.join(names)}")
    if result.tools_stopped:
        parts.append(f"tool use stopped: {result.tools_stopped}")
    if result.unmade_change:
        parts.append(f"change asked for not made: {result.unmade_change}")
    if result.tests_failing:
        parts.append(f"tests still failing: {result.tests_failing}")
    if result.last_call_failed and result.exit_reason is ExitReason.TEXT_RESPONSE:
        parts.append("the last tool call failed")
    return "; ".join(parts)


def summary(result: TurnResult) -> str | None:
    """The footer for an editor's end of turn, or None when there is nothing to report (no file changed and
    nothing failed, was refused or stopped: a question answered from reads alone)."""
    if not (result.files_changed or result.failed_calls or result.refused or result.failed_edits
            or result.tools_stopped or result.unmade_change or result.tests_failing
            or (result.last_call_failed and result.exit_reason is ExitReason.TEXT_RESPONSE)):
        return None
    return footer(result)


def summary_json(result: TurnResult) -> dict[str, object]:
    """The outcome record as the faces send it (camelCase, for ``agent/turn`` results and ``_meta``)."""
    return {"summary": summary(result), "filesChanged": [c.to_json() for c in result.files_changed],
            "failedCalls": [c.to_json() for c in result.failed_calls], "refused": [r.to_json() for r in result.refused],
            "editsFailed": edits_failed(result), "lastCallFailed": result.last_call_failed,
            "toolsStopped": result.tools_stopped, "changeNotMade": result.unmade_change,
            "testsFailing": result.tests_failing}


def edits_failed(result: TurnResult) -> bool:
    """An edit the model attempted did not land: it failed (and no later edit of the file made it good) or
    was refused; or the request asked for a change and no file changed (``unmade_change``); or the tests
    agentls ran after the change still fail (``tests_failing``)."""
    return bool(result.failed_edits) or any(r.action == "edit" for r in result.refused) or \
        bool(result.unmade_change) or bool(result.tests_failing)
