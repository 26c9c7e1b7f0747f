"""Startup context: the project's instruction file at the workspace root (docs/loop.md §6)."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio

from agentls.agent.truncate import cap_text
from agentls.agent.paths import OutsideWorkspace, resolve_in_workspace

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
    read, and the cut count is then an estimate from the byte size.
    """
    apath = anyio.Path(path)
    size = (await apath.stat()).st_size
    window = max(cap, 1) * 4
    if cap <= 0 or size <= window * 2:
        text = (await apath.read_bytes()).decode("utf-8", errors="replace")
        return cap_text(text, cap)
    async with await anyio.open_file(path, "rb") as f:
        head = await f.read(window)
        await f.seek(size - window)
        tail = await f.read(window)
    head_text = head.decode("utf-8", errors="replace")
    tail_text = tail.decode("utf-8", errors="replace")
    middle = max(0, size - 2 * window)
    capped, cut = cap_text(head_text + tail_text, cap)
    if cut:
        capped = capped.replace(f"[... {cut} characters omitted ...]",
                                f"[... about {cut + middle} characters omitted ...]", 1)
    return capped, cut + middle


async def _regular_file_inside(root: Path, name: str) -> Path | None:
    try:
        resolved = resolve_in_workspace(root, name)
    except OutsideWorkspace:
        log.warning("not reading %s: it resolves outside the workspace %s", name, root)
        return None
    if not await anyio.Path(resolved).is_file():
        return None
    return resolved


async def load_root_context(root: Path, cap: int = ROOT_CONTEXT_CAP) -> str | None:
    """``AGENTS.md`` at the root, else ``CLAUDE.md``, else ``.cursorrules``; None when none exists.

    The text is capped head+tail at ``cap`` chars and starts with a header naming the file. An
    empty file counts as absent; a file that is a symlink out of the workspace is never read.
    """
    for name in ROOT_CONTEXT_FILES:
        path = await _regular_file_inside(root, name)
        if path is None:
            continue
        try:
            text, cut = await read_capped(path, cap)
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
            continue
        if not text.strip():
            continue
        if cut:
            log.info("%s is long: %d characters were cut to fit the %d-character cap", name, cut, cap)
        return f"{instructions_header(name)}\n{text.strip()}"
    return None
