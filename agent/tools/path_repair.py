"""Paths a small model gets slightly wrong: which workspace file it meant, or the nearest ones
(docs/loop.md §9.7). Confinement stays agent/paths.py's: nothing here reaches outside the root."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import anyio.to_thread

from ..paths import OutsideWorkspace, display, resolve_in_workspace
from .gitignore import walk

MAX_WALK = 5000  # files looked at to resolve a path or suggest one
MAX_SUGGESTIONS = 5


class PathNotFound(Exception):
    """No file fits: the message lists the nearest existing paths."""


@dataclass(frozen=True)
class Located:
    path: Path
    note: str | None = None  # set when the path the model gave was taken as another one


def workspace_files(root: Path, limit: int = MAX_WALK) -> list[str]:
    """Files of the workspace (relative, posix, sorted as walked), git-ignored ones skipped, at most ``limit``."""
    out: list[str] = []
    for rel, is_dir, _ in walk(root, root, 64):
        if not is_dir:
            out.append(rel)
            if len(out) >= limit:
                break
    return out


def _strip_root_prefix(root: Path, parts: tuple[str, ...]) -> tuple[str, ...] | None:
    """``parts`` without a leading run that repeats the end of the root's own path, longest first."""
    tail = root.parts
    for k in range(min(len(parts), len(tail) - 1), 0, -1):
        if parts[:k] == tuple(tail[-k:]):
            return parts[k:]
    return None


def _clean(raw: str) -> tuple[str, ...]:
    text = raw.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return tuple(p for p in PurePosixPath(text).parts if p not in ("", "."))


def nearest(raw: str, files: list[str], n: int = MAX_SUGGESTIONS) -> list[str]:
    """Existing paths most like ``raw``: by whole path, then by file name."""
    picks = difflib.get_close_matches(raw, files, n=n, cutoff=0.4)
    name = PurePosixPath(raw).name
    by_name: dict[str, list[str]] = {}
    for f in files:
        by_name.setdefault(PurePosixPath(f).name, []).append(f)
    for close in difflib.get_close_matches(name, list(by_name), n=n, cutoff=0.5):
        for f in by_name[close]:
            if f not in picks:
                picks.append(f)
    return picks[:n]


def _tail_matches(parts: tuple[str, ...], files: list[str]) -> list[str]:
    k = len(parts)
    return [f for f in files if tuple(f.split("/"))[-k:] == parts]


def _locate(root: Path, raw: str, creating: bool) -> Located:
    root = root.resolve()
    path = resolve_in_workspace(root, raw)  # OutsideWorkspace propagates: refused as before
    if path.exists() or Path(raw.strip()).is_absolute():
        return Located(path)
    parts = _clean(raw)
    if not parts:
        return Located(path)
    rest = _strip_root_prefix(root, parts)
    if rest is not None and (rest or not creating):
        candidate = resolve_in_workspace(root, "/".join(rest) or ".")
        first_is_a_dir = (root / parts[0]).exists()
        if candidate.exists() or (creating and not first_is_a_dir):
            return Located(candidate, _note(raw, root, candidate, "the workspace folder's name was dropped"))
    if creating:
        return Located(path)
    files = workspace_files(root)
    for how, found in (("the only file ending with it", _tail_matches(parts, files)),
                       ("the only file with that name", _tail_matches(parts[-1:], files))):
        if len(found) == 1:
            hit = resolve_in_workspace(root, found[0])
            return Located(hit, _note(raw, root, hit, how))
        if len(found) > 1:
            raise PathNotFound(f"{raw} does not exist; it could be any of: {', '.join(found[:10])}")
    close = nearest(raw, files)
    hint = f" The nearest existing paths: {', '.join(close)}." if close else ""
    raise PathNotFound(f"{raw} does not exist.{hint}")


def _note(raw: str, root: Path, path: Path, why: str) -> str:
    return f"path {raw!r} was taken as {display(root, path)!r}: {why}"


async def locate(root: Path, raw: str, *, creating: bool = False) -> Located:
    """The file ``raw`` names (see the module doc). ``creating``: a write that may create the file, so only
    the workspace-name prefix is repaired. Raises OutsideWorkspace or PathNotFound."""
    return await anyio.to_thread.run_sync(_locate, root, raw, creating)


__all__ = ["Located", "OutsideWorkspace", "PathNotFound", "locate", "nearest", "workspace_files"]
