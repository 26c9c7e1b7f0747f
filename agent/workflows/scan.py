"""Where workflow files are looked for, and reading them safely (docs/workflows.md, "Where files are found").

A folder is walked without following a symlinked folder, at most ``MAX_DEPTH`` deep and ``MAX_FILES`` files;
a file is read only if it is a regular file (never a FIFO or a device) of at most ``MAX_BYTES``, and in a
workspace folder a symlink must point inside the workspace. Files are parsed again only when their size or
modification time changed (``FileCache``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

MAX_FILES = 500  # per folder
MAX_DEPTH = 4
MAX_BYTES = 256 * 1024
T = TypeVar("T")


@dataclass(frozen=True)
class Folder:
    path: Path
    scope: str  # "workspace" or "user"
    confine: Path | None  # a symlink must resolve inside this folder (the workspace); None: anywhere


def user_dir(user_config: Path) -> Path:
    """The folder beside the user config file (``~/.config/agentls/``, or beside ``$AGENTLS_CONFIG``)."""
    return user_config.parent


def walk(folder: Folder, suffix: str, problems: list[str]) -> list[tuple[tuple[str, ...], Path]]:
    """``(parts relative to the folder, path)`` of the files ending in ``suffix``, in name order."""
    found: list[tuple[tuple[str, ...], Path]] = []
    try:
        st = os.lstat(folder.path)
    except OSError:
        return found
    if stat.S_ISLNK(st.st_mode):
        if not _inside(folder, folder.path):
            problems.append(f"{folder.path}: a symlink to outside the workspace; not read")
            return found
    elif not stat.S_ISDIR(st.st_mode):
        return found
    skipped = 0

    def visit(path: Path, parts: tuple[str, ...]) -> None:
        nonlocal skipped
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            problems.append(f"{path}: could not be listed ({exc.strerror or exc})")
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and entry.is_symlink() and entry.is_dir():  # a symlinked folder: followed if inside
                    if not _inside(folder, Path(entry.path), user_root=folder.path.parent):
                        problems.append(f"{entry.path}: a symlinked folder pointing outside the "
                                        f"{'workspace' if folder.confine else 'user config folder'}; not read")
                        continue
                    is_dir = True
            except OSError:
                continue
            if is_dir:
                if len(parts) + 1 < MAX_DEPTH:
                    visit(Path(entry.path), (*parts, entry.name))
                continue
            if not entry.name.endswith(suffix):
                continue
            if len(found) >= MAX_FILES:
                skipped += 1
                continue
            found.append(((*parts, entry.name[: -len(suffix)]), Path(entry.path)))

    visit(folder.path, ())
    if skipped:
        problems.append(f"{folder.path}: holds more than {MAX_FILES} {suffix} files; only the first {MAX_FILES} "
                        f"(in name order) are read, {skipped} are ignored")
    return found


def _inside(folder: Folder, path: Path, user_root: Path | None = None) -> bool:
    """``path`` resolves inside the folder's confinement (the workspace); in a user folder, inside
    ``user_root`` when given (a symlinked folder), else anywhere."""
    confine = folder.confine or user_root
    if confine is None:
        return True
    try:
        return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(confine))
    except (OSError, ValueError):
        return False


def read(folder: Folder, path: Path) -> str:
    """The file's text; ``OSError`` (with a plain message) for anything that may not or cannot be read."""
    from ..fileio import FileTooLarge, NotRegularFile, read_small

    if not _inside(folder, path):
        raise OSError(f"{path} is a symlink to outside the workspace; it is not read")
    try:
        data = read_small(path, MAX_BYTES)
    except NotRegularFile as exc:
        raise OSError(f"{path} is {exc.kind}, not a regular file; it is not read") from None
    except FileTooLarge:
        raise OSError(f"{path} is over {MAX_BYTES // 1024} KB; it is not read") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise OSError(f"{path} is not UTF-8 text; it is not read") from None


def signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class FileCache(Generic[T]):
    """Parsed files by path, parsed again only when the file's inode, size or mtime changed."""

    def __init__(self) -> None:
        self._entries: dict[Path, tuple[tuple[int, int, int] | None, T]] = {}

    def get(self, path: Path, parse: Callable[[], T]) -> T:
        sig = signature(path)
        cached = self._entries.get(path)
        if cached is not None and sig is not None and cached[0] == sig:
            return cached[1]
        value = parse()
        self._entries[path] = (sig, value)
        return value

    def keep_only(self, paths: set[Path]) -> None:
        for path in [p for p in self._entries if p not in paths]:
            del self._entries[path]
