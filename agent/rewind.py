"""Rewind and fork points: which turns a transcript can drop, and putting back the files those turns changed.

A turn starts at a user message that is not a steer. Turns folded into a compaction summary cannot be
rewound (their messages are gone from the transcript). A rewind refuses, and changes nothing, when a
file the turns changed has been changed since by someone else (docs/sessions.md "Rewind").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .outcome import count_lines
from .paths import OutsideWorkspace, display, resolve_in_workspace
from .types import Message

if TYPE_CHECKING:
    from .sessions.tree import FileRewind
    from .undo import Checkpoints
    from .conversation import Conversation
    from .host import Host


class RewindRefused(Exception):
    """Nothing was rewound; the message says why and what to do."""

    def __init__(self, message: str, conflicts: list[str] | None = None) -> None:
        super().__init__(message)
        self.conflicts = conflicts or []


@dataclass(frozen=True)
class RewindResult:
    turns: int
    messages_before: int
    messages_after: int
    files: list[dict[str, Any]] = field(default_factory=list)  # {path, action, added, removed}

    def summary(self) -> str:
        """One line per file put back, for the user."""
        what = "the last turn" if self.turns == 1 else f"the last {self.turns} turns"
        if not self.files:
            return f"Rewound {what}; no files needed putting back."
        lines = [f"Rewound {what} and put back {len(self.files)} file(s):"]
        for f in self.files:
            lines.append(f"- {f['path']}: {f['action']} (+{f['added']} −{f['removed']})")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"turns": self.turns, "messagesBefore": self.messages_before, "messagesAfter": self.messages_after,
                "files": self.files, "summary": self.summary()}


def _meta(message: Message) -> dict[str, Any]:
    meta = message.get("meta")
    return meta if isinstance(meta, dict) else {}


def turn_starts(messages: list[Message]) -> tuple[list[int], bool]:
    """The indexes of the user messages that start a rewindable turn, and whether a compaction summary holds
    older turns (the summary's own message, merged with a turn's request or not, cannot be rewound)."""
    folded = max((i for i, m in enumerate(messages) if _meta(m).get("summary")), default=-1)
    starts = [i for i, m in enumerate(messages) if i > folded and m.get("role") == "user"
              and not _meta(m).get("steer")]
    return starts, folded >= 0


def fork_point(messages: list[Message], message_id: str) -> int:
    """How many messages a fork at ``message_id`` keeps: the turns before it when it names a turn's request,
    else every turn up to the end of the one holding it. ``KeyError`` when no message has that id."""
    at = next((i for i, m in enumerate(messages) if _meta(m).get("messageId") == message_id), None)
    if at is None:
        raise KeyError(message_id)
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user" and not _meta(m).get("steer")]
    if at in starts:
        return at
    return next((i for i in starts if i > at), len(messages))


async def _current(host: Host, root: Path, path: Path) -> tuple[str | None, str | None]:
    """The file's text now (None: missing), and what makes it impossible to put back (None: nothing): a symlink
    swapped in since (a write would land wherever it points), or something that is not a text file any more."""
    try:
        if resolve_in_workspace(root, path) != path:
            return None, "is now a symlink"
    except OutsideWorkspace:
        return None, "now resolves outside the workspace"
    try:
        return await host.read_text(path), None
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except (OSError, UnicodeError, ValueError) as exc:
        return None, f"is no longer a readable text file ({type(exc).__name__})"


async def check_files(files: list[FileRewind], host: Host, root: Path, *, force: bool,
                      action: str = "rewind") -> dict[str, str | None]:
    """Each file's text now, by path; ``RewindRefused`` (changing nothing) when one cannot be put back safely, or,
    unless ``force``, when putting one back would lose a change made after or between the turns
    (``FileRewind.conflicts_with``). Shared by rewind and undo (``action``: "rewind" or "undo")."""
    done = "rewound" if action == "rewind" else "undone"
    now: dict[str, str | None] = {}
    conflicts, blocked = [], []
    for f in files:
        current, problem = await _current(host, root, Path(f.path))
        now[f.path] = current
        if problem is not None:
            blocked.append(f"{display(root, Path(f.path))} {problem}")
        elif f.conflicts_with(current):
            conflicts.append(display(root, Path(f.path)))
    if blocked:
        raise RewindRefused(f"not {done}: {'; '.join(blocked)}, so it cannot be put back safely (not even with "
                            "force). Move it away or put the file back yourself; nothing was changed",
                            [b.split(" ", 1)[0] for b in blocked])
    if conflicts and not force:
        raise RewindRefused(
            f"not {done}: {', '.join(conflicts)} changed after or between the turn(s) being {done} (by you or "
            f"another program), and putting them back would lose that change. Save or undo that change first, or "
            f"{action} with force to overwrite it; nothing was changed", conflicts)
    return now


async def rewind(conversation: Conversation, checkpoints: Checkpoints, host: Host, turns: int, *,
                 force: bool = False) -> RewindResult:
    """Drop the last ``turns`` turns and put back their files; ``RewindRefused`` leaves everything as it was.
    Runs under the session's lease (``SessionBusy`` while another process drives it)."""
    if turns < 1:
        raise RewindRefused("the number of turns to rewind must be at least 1")
    async with conversation.lease():
        messages = conversation.messages
        starts, folded = turn_starts(messages)
        if turns > len(starts):
            if folded:
                raise RewindRefused(f"only {len(starts)} turn(s) can be rewound: the earlier ones were folded into a "
                                    "compaction summary, so their messages are gone; nothing was changed")
            raise RewindRefused(f"the session has only {len(starts)} turn(s) to rewind, not {turns}; "
                                "nothing was changed")
        first_turn = conversation.turn_index - turns + 1
        await checkpoints.settle()
        files = await checkpoints.files_since(first_turn)
        root = conversation.root
        now = await check_files(files, host, root, force=force)
        done = []
        for f in files:
            path, current = Path(f.path), now[f.path]
            if f.existed:
                if current != f.content:
                    outcome = await host.write_text(path, f.content or "", previous=current)
                    if not outcome.applied:
                        raise RewindRefused(f"not rewound: {display(root, path)} could not be written back; "
                                            "the files already put back stay put back, the transcript is unchanged")
                action = "restored" if current is not None else "recreated (the rewound turns deleted it)"
            else:
                if current is not None and not (await host.delete_file(path)).applied:
                    raise RewindRefused(f"not rewound: {display(root, path)} could not be removed; the files "
                                        "already put back stay put back, the transcript is unchanged")
                action = "removed (the rewound turns created it)"
            added, removed = count_lines(current or "", f.content or "")
            done.append({"path": display(root, path), "action": action, "added": added, "removed": removed})
        await checkpoints.files_since(first_turn, drop=True)
        before = len(messages)
        conversation.replace(messages[:starts[-turns]])
        conversation.turn_index = first_turn - 1
        await conversation.persist(final=True)
        return RewindResult(turns, before, len(conversation.messages), done)
