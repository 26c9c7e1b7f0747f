"""Startup context: the project's instruction file at the workspace root (docs/loop.md §6)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import anyio
import anyio.to_thread

from ..fileio import CHUNK, NotRegularFile, lstat_kind, open_regular, read_fd
from ..paths import OutsideWorkspace, resolve_in_workspace
from ..truncate import cap_text

log = logging.getLogger("agentls.context")

ROOT_CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md", ".cursorrules")
ROOT_CONTEXT_CAP = 20_000


def instructions_header(source: str) -> str:
    """The line that names where a block of project instructions came from.

    Hints use the same header, and ``HintTracker.seed_from`` recognises it in old tool results.
    """
    return f"[Project instructions from {source}]"


async def read_capped(path: Path, cap: int) -> tuple[str, int]:
    """The text of a regular file, capped head+tail at ``cap`` chars; (text, chars cut).

    A huge file is never read whole: past a few times the cap only its head and tail bytes are
    read, and the cut count is then an estimate from the byte size. Anything but a regular file
    raises ``NotRegularFile`` without being opened (a FIFO would block the open for ever).
    """
    fd, st = await anyio.to_thread.run_sync(lambda: open_regular(path), abandon_on_cancel=True)
    try:
        size = st.st_size
        window = max(cap, 1) * 4
        if cap <= 0 or size <= window * 2:
            text = (await read_fd(fd, window * 2 + CHUNK, path, size)).decode("utf-8", errors="replace")
            return cap_text(text, cap)
        head = await anyio.to_thread.run_sync(os.pread, fd, window, 0)
        tail = await anyio.to_thread.run_sync(os.pread, fd, window, size - window)
    finally:
        os.close(fd)
    head_text = head.decode("utf-8", errors="replace")
    tail_text = tail.decode("utf-8", errors="replace")
    middle = max(0, size - 2 * window)
    capped, cut = cap_text(head_text + tail_text, cap)
    if cut:
        capped = capped.replace(f"[... {cut} characters omitted ...]",
                                f"[... about {cut + middle} characters omitted ...]", 1)
    return capped, cut + middle


async def _regular_file_inside(root: Path, name: str, skipped: list[str] | None = None) -> Path | None:
    try:
        resolved = resolve_in_workspace(root, name)
    except OutsideWorkspace:
        log.warning("not reading %s: it resolves outside the workspace %s", name, root)
        return None
    kind = await anyio.to_thread.run_sync(lstat_kind, resolved)
    if kind is not None:
        log.warning("not reading %s: it is %s, not a regular file", resolved, kind)
        if skipped is not None:
            skipped.append(f"{name} ({kind})")
        return None
    if not await anyio.Path(resolved).is_file():
        return None
    return resolved


async def load_root_context(root: Path, cap: int = ROOT_CONTEXT_CAP, skipped: list[str] | None = None
                            ) -> str | None:
    """``AGENTS.md`` at the root, else ``CLAUDE.md``, else ``.cursorrules``; None when none exists.

    The text is capped head+tail at ``cap`` chars and starts with a header naming the file. An
    empty file counts as absent; a file that is a symlink out of the workspace is never read, nor is
    a FIFO, a device or a socket (each is logged and added to ``skipped``).
    """
    for name in ROOT_CONTEXT_FILES:
        path = await _regular_file_inside(root, name, skipped)
        if path is None:
            continue
        try:
            text, cut = await read_capped(path, cap)
        except NotRegularFile as exc:  # swapped for a FIFO or a device since it was checked
            log.warning("not reading %s", exc)
            if skipped is not None:
                skipped.append(f"{name} ({exc.kind})")
            continue
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
            continue
        if not text.strip():
            continue
        if cut:
            log.info("%s is long: %d characters were cut to fit the %d-character cap", name, cut, cap)
        return f"{instructions_header(name)}\n{text.strip()}"
    return None
