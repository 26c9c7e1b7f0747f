"""Workspace files the agent reads for itself (the pre-read's sizes, the tests it runs, a digested pre-read read
again): only a regular file inside the workspace, never a FIFO that would block the open or a symlink out."""

from __future__ import annotations

import stat
from pathlib import Path


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


def read_regular(root: Path, file: str, max_bytes: int | None = None) -> str | None:
    """The text of ``regular_file(root, file)``; None when it is not one, is unreadable or is over ``max_bytes``."""
    path = regular_file(root, file)
    try:
        if path is None or (max_bytes is not None and path.stat().st_size > max_bytes):
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
