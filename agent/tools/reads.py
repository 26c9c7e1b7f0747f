"""Read before overwrite: an existing file is changed only after the model has seen it as it is now.

``edit_file``, and ``write_file`` over an existing file, fail unless the file was read (``read_file``,
any part of it) in this session, and fail if its content changed since (the user typed in the buffer,
a command rewrote it). A file the model wrote or edited itself counts as seen with that content. Like
Claude Code's rule: the model never overwrites what it has not looked at.

One ledger per agent session, in memory: a resumed session starts with nothing read.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ReadLedger:
    def __init__(self) -> None:
        self._seen: dict[Path, str] = {}
        self._confirm: dict[Path, str] = {}  # a refused write_file that would drop lines: path -> its content

    def saw(self, path: Path, text: str) -> None:
        """The model has seen (read or written) ``path`` with this content."""
        self._seen[path] = _digest(text)
        self._confirm.pop(path, None)

    def was_read(self, path: Path) -> bool:
        return path in self._seen

    def forget(self, path: Path) -> None:
        self._seen.pop(path, None)

    def check(self, path: Path, current: str, rel: str, verb: str) -> str | None:
        """Why ``verb`` (edit, overwrite) of ``path`` may not go ahead, or None."""
        seen = self._seen.get(path)
        if seen is None:
            return f"read {rel} with read_file before you {verb} it."
        if seen != _digest(current):
            return (f"{rel} changed since you last read it (the user or a command changed it): read it again "
                    f"with read_file before you {verb} it.")
        return None

    def confirmed(self, path: Path, content: str) -> bool:
        """True when this exact content was already refused once for dropping lines (the model insists)."""
        return self._confirm.get(path) == _digest(content)

    def ask_confirmation(self, path: Path, content: str) -> None:
        self._confirm[path] = _digest(content)
