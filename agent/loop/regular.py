"""Workspace files the agent reads for itself (the pre-read's sizes, the tests it runs, a digested pre-read read
again): only a regular file inside the workspace, never a FIFO that would block the open or a symlink out."""

from __future__ import annotations

import stat
from pathlib import Path

from ..fileio import read_small

MAX_READ_BYTES = 1024 * 1024


def regular_file(root: Path, file: str) -> Path | None:
    """``root / file`` when it is a regular file inside the workspace, else None."""
    path = root / file
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        path.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return None
    return path


def read_regular(root: Path, file: str, max_bytes: int = MAX_READ_BYTES) -> str | None:
    """The text of ``regular_file(root, file)`` (as ``read_text`` gives it, undecodable bytes replaced); None when
    it is not one, is unreadable or is over ``max_bytes``. Opened non-blocking and checked again once open
    (``fileio.read_small``), so a file swapped for a FIFO after the check still cannot block the thread."""
    path = regular_file(root, file)
    if path is None:
        return None
    try:
        data = read_small(path, max_bytes)
    except OSError:  # not regular any more, too large, gone
        return None
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
