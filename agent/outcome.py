"""What a turn really did, whatever the model says it did: files changed, failed calls, refusals.

``OutcomeRecorder`` watches one turn's tool calls: each result as it joins the transcript, each
permission refusal, each file's content before the turn first changed it (the undo checkpoint) and
after each applied edit. ``files_changed`` compares the two, so a write that was not applied, or was
undone by a later one, does not count. The turn's ``TurnResult``
carries the record; ``agentls run`` prints it as a footer and the faces as an end-of-turn summary
(``footer()``).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from .types import ToolCall

EDIT_TOOLS = frozenset({"edit_file", "write_file"})


@dataclass(frozen=True)
class FileChange:
    path: str  # relative to the workspace, posix
    added: int
    removed: int
    created: bool = False
    deleted: bool = False

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "added": self.added, "removed": self.removed, "created": self.created,
                "deleted": self.deleted}


@dataclass(frozen=True)
class FailedCall:
    tool: str
    reason: str  # the first line of the error result
    path: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"tool": self.tool, "reason": self.reason, "path": self.path}


@dataclass(frozen=True)
class Refusal:
    action: str  # "command" or "edit"
    title: str  # the command line, or "Edit greet.py"
    reason: str  # "approval: auto-edit", "rejected by the user", ...

    def to_json(self) -> dict[str, object]:
        return {"action": self.action, "title": self.title, "reason": self.reason}


def refusal_reason(text: str, mode: str) -> str:
    """A short reason for a refusal the permission check wrote for the model."""
    if "plan mode" in text:
        return "plan mode"
    if "cannot ask" in text:
        return f"approval: {mode}"
    if "always reject" in text:
        return "rejected for the session"
    if "cancelled" in text:
        return "permission request cancelled"
    if "unknown option" in text:
        return "unknown answer from the client"
    return "rejected by the user"


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    line = line.removeprefix("error: ")
    return line if len(line) <= 200 else line[:197] + "..."


def _norm_path(raw: object) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    return PurePosixPath(raw.strip().lstrip("./")).as_posix()


class OutcomeRecorder:
    def __init__(self) -> None:
        self._before: dict[Path, str | None] = {}  # content before this turn first changed the file
        self._after: dict[Path, str | None] = {}  # content the turn's last applied edit of the file wrote
        self._failed: list[FailedCall] = []
        self.refused: list[Refusal] = []
        self._edit_failures: list[FailedCall] = []
        self._edited_ok: set[str] = set()  # paths (as given, and file names) of edits that succeeded
        self.last_call_failed = False
        self.tools_stopped: str | None = None  # why tool use was stopped for the rest of the turn

    # ----- what the turn's tool calls report
    def before_change(self, path: Path, previous: str | None) -> None:
        self._before.setdefault(path, previous)

    def after_change(self, path: Path, content: str | None) -> None:
        """An edit of ``path`` was applied: it now holds ``content`` (None: deleted)."""
        self._after[path] = content

    def applied(self) -> set[Path]:
        """The files an edit of this turn was applied to."""
        return set(self._after)

    def before(self, path: Path) -> str | None:
        """``path``'s content before this turn first changed it (None: it did not exist, or was not changed)."""
        return self._before.get(path)

    def written(self, path: Path) -> str | None:
        """What this turn's last applied edit of ``path`` wrote (None: none was applied, or it deleted it)."""
        return self._after.get(path)

    def refusal(self, action: str, title: str, text: str, mode: str) -> None:
        self.refused.append(Refusal("edit" if action == "edit" else "command", title, refusal_reason(text, mode)))

    def tool_result(self, name: str, args: dict[str, Any] | None, is_error: bool, text: str) -> None:
        self.last_call_failed = is_error
        path = _norm_path((args or {}).get("path"))
        if not is_error:
            if name in EDIT_TOOLS and path:
                self._edited_ok.update({path, PurePosixPath(path).name})
            return
        if any(text.startswith(f"error: {r}") for r in ("this command needs", "this edit needs")) or \
                text.startswith(("error: the user rejected", "error: the user has refused",
                                 "error: the permission request")):
            return  # counted as a refusal
        failure = FailedCall(name, _first_line(text), path)
        self._failed.append(failure)
        if name in EDIT_TOOLS:
            self._edit_failures.append(failure)

    def stop_tools(self, why: str) -> None:
        self.tools_stopped = self.tools_stopped or why

    # ----- at the end of the turn
    def failed_calls(self) -> tuple[FailedCall, ...]:
        """Failed calls, except failed edits a later edit of the same file made good (a read-first refusal
        followed by the same edit is not a failure of the turn)."""
        unresolved = set(map(id, self.failed_edits()))
        return tuple(f for f in self._failed if f.tool not in EDIT_TOOLS or id(f) in unresolved)

    def failed_edits(self) -> tuple[FailedCall, ...]:
        """Failed edit calls that no later successful edit of the same file made good."""
        out = []
        for f in self._edit_failures:
            if f.path is None or (f.path not in self._edited_ok and PurePosixPath(f.path).name not in self._edited_ok):
                out.append(f)
        return tuple(out)

    def files_changed(self, root: Path) -> tuple[FileChange, ...]:
        """Each file's content before the turn first changed it against the last content the turn's edits
        wrote (no file is read again: an editor would see extra requests)."""
        changes = []
        for path, before in self._before.items():
            if path not in self._after:
                continue  # the write was never applied
            after = self._after[path]
            if after == before:
                continue
            try:
                rel = path.relative_to(root).as_posix()
            except ValueError:
                rel = str(path)
            added, removed = count_lines(before or "", after or "")
            changes.append(FileChange(rel, added, removed, created=before is None and after is not None,
                                      deleted=after is None))
        return tuple(sorted(changes, key=lambda c: c.path))


def count_lines(before: str, after: str) -> tuple[int, int]:
    added = removed = 0
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def call_key(name: str, args: dict[str, Any] | None, raw: str) -> str:
    """Identical calls have identical keys (arguments compared as parsed JSON, key order ignored)."""
    if args is not None:
        return name + "\x00" + json.dumps(args, sort_keys=True, ensure_ascii=False)
    return name + "\x00" + raw


def key_of_call(call: ToolCall) -> str:
    """``call_key`` of a tool call as the transcript or a provider holds it (arguments as a JSON string)."""
    fn = call.get("function") or {}
    raw = str(fn.get("arguments") or "")
    try:
        args = json.loads(raw)
    except ValueError:
        args = None
    return call_key(str(fn.get("name")), args if isinstance(args, dict) else None, raw)


class LoopGuard:
    """A call (same tool, same arguments) that already gave the same result ``limit - 1`` times in a row in this
    turn is not run again: the model is told to answer with what it has, and later model calls get no tools.

    A result that differs (the file changed between two reads) starts the count again, so re-reading a
    file after editing it is not a loop. Copies of a call within one reply count once.
    """

    def __init__(self, limit: int = 3) -> None:
        self.limit = limit
        self._last: dict[str, str] = {}  # key -> the call's last result
        self._streak: dict[str, int] = {}  # key -> how many times in a row it gave that result
        self._pending: dict[str, int] = {}  # key -> the step whose copy of the call is on its way

    def see(self, name: str, args: dict[str, Any] | None, raw: str, step: int = 0) -> str | None:
        """Before the call runs: the error for the model when it would be the ``limit``-th identical call."""
        key = call_key(name, args, raw)
        n = self._streak.get(key, 0)
        if self._pending.get(key) == step or n < self.limit - 1:
            self._pending[key] = step
            return None
        return (f"error: you made this exact {name} call {n + 1} times in this turn (same arguments, and the same "
                "result each time), so it did not run and tool use is stopped for the rest of this turn. Answer the "
                "user now with what you know: say plainly what worked, what failed, and what is left undone.")

    def result(self, name: str, args: dict[str, Any] | None, raw: str, text: str) -> None:
        """After the call ran (once per reply: copies within one reply were counted once)."""
        key = call_key(name, args, raw)
        step = self._pending.pop(key, None)
        if step is None:
            return
        if self._last.get(key) == text:
            self._streak[key] = self._streak.get(key, 0) + 1
        else:
            self._last[key], self._streak[key] = text, 1
