"""Workspace confinement: every path a tool or hint touches resolves inside the root, or is refused."""

from __future__ import annotations

import functools
import os
from pathlib import Path, PosixPath

MAX_PATH_CHARS = 4096


class OutsideWorkspace(ValueError):
    """The path resolves outside the workspace (``..``, an absolute path, ``~`` or a symlink escape)."""


class Workspace(PosixPath):
    """A session's root, with its extra roots (ACP ``additionalDirectories``): paths inside any of them are in the
    workspace. Paths derived from it (``root / "x"``) have no extra roots of their own."""

    extra: tuple[str, ...] = ()  # resolved, absolute

    def resolve(self, strict: bool = False) -> Workspace:
        out = Workspace(super().resolve(strict))
        out.extra = self.extra
        return out


def extra_root(raw: str) -> Path:
    """``raw`` as an extra workspace root: an absolute, existing directory that is not ``/``."""
    if not os.path.isabs(raw) or "\x00" in raw:
        raise OutsideWorkspace(f"{raw!r} is not an absolute path")
    resolved = os.path.realpath(raw)
    if resolved == os.sep:
        raise OutsideWorkspace(f"{raw!r} cannot be a workspace root: it would open every file of the machine")
    if not os.path.isdir(resolved):
        raise OutsideWorkspace(f"{raw!r} is not a directory (missing, a file, or a symlink loop)")
    return Path(resolved)


def _within(base: str, resolved: str) -> bool:
    return resolved == base or resolved.startswith(base if base.endswith(os.sep) else base + os.sep)


@functools.lru_cache(maxsize=256)
def _resolved_root(root: Path) -> Path:
    return root.resolve()


def resolve_in_workspace(root: Path, raw: str | os.PathLike[str] | None) -> Path:
    """The absolute, symlink-resolved path for ``raw``, which must stay inside ``root``.

    ``raw`` is relative to the root, or absolute inside it. ``~`` is never expanded: a path
    starting with it is refused, so is anything that resolves (through ``..`` or symlinks) outside.
    """
    extras = root.extra if isinstance(root, Workspace) else ()
    root = _resolved_root(root)
    text = "" if raw is None else os.fspath(raw)
    if "\x00" in text:
        raise OutsideWorkspace("the path contains a NUL byte")
    if len(text) > MAX_PATH_CHARS:
        raise OutsideWorkspace(f"the path is {len(text)} characters long; the limit is {MAX_PATH_CHARS}")
    text = text.strip()
    if text.startswith("~"):
        raise OutsideWorkspace(f"{text!r} points into a home directory, outside the workspace {root}")
    base = str(root)
    # On strings, not Path objects: this runs several times per tool call, and pathlib's resolve() costs
    # twice as much for the same realpath(). A symlink loop is left unresolved by realpath(); whatever then
    # opens it gets ELOOP, and the check below still sees where the path stands.
    try:
        resolved = os.path.realpath(os.path.join(base, text) if text else base)
    except (OSError, ValueError) as exc:  # names too long
        raise OutsideWorkspace(f"{text!r} cannot be resolved: {exc}") from exc
    if not _within(base, resolved) and not any(_within(other, resolved) for other in extras):
        raise OutsideWorkspace(f"{text!r} resolves outside the workspace {root}"
                               + (f" and its other roots ({', '.join(extras)})" if extras else ""))
    return Path(resolved)


def display(root: Path, path: Path) -> str:
    """The path relative to the root, for messages to the model and the user."""
    try:
        rel = path.relative_to(_resolved_root(root))
    except ValueError:
        return str(path)
    return rel.as_posix() or "."
