"""The core's own host: files on the disk, commands as child processes (``agentls.agent.process``).

Files: every path is resolved again at the moment of the read or write and must still lie inside the
root (a symlink planted since the tool checked it is caught here); reads take regular files only and are
bounded (``agentls.agent.fileio``); writes are atomic, never follow a symlink, and refuse to overwrite a
file that changed since ``previous`` was read (``agentls.agent.safe_write``).
"""

from __future__ import annotations

import errno
import inspect
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio.to_thread

from . import safe_write
from .fileio import (
    CHUNK,
    MAX_TEXT_BYTES,
    TextWindow,
    decode_text,
    open_regular,
    read_fd,
    read_fd_capped,
    read_window,
)
from .host import CommandResult, CommandSpec, PermissionDecision, PermissionRequest, WriteResult
from .paths import OutsideWorkspace, display, resolve_in_workspace
from .process import run_process
from .types import SessionUpdate

UpdateCallback = Callable[[SessionUpdate], Awaitable[None] | None]


class DiskHost:
    """Reads and writes the disk; runs commands itself; cannot ask the user (the policy decides)."""

    can_ask = False  # the agent's own steps that would only be refused are not taken (agent/loop/test_check.py)

    def __init__(self, root: Path | str, on_update: UpdateCallback | None = None) -> None:
        self._root = Path(root).resolve()
        self._on_update = on_update

    @property
    def root(self) -> Path:
        return self._root

    def _confined(self, path: Path) -> Path:
        """``path`` resolved now; ``UnsafeTarget`` when it has left the root since the caller checked it."""
        try:
            return resolve_in_workspace(self._root, path)
        except OutsideWorkspace as exc:
            raise safe_write.UnsafeTarget(errno.EPERM, f"refused: {exc}") from None

    async def read_text(self, path: Path) -> str:
        """The file's text: a regular file of at most ``MAX_TEXT_BYTES`` (else ``NotRegularFile`` or
        ``FileTooLarge``), UTF-8, universal newlines."""
        target = self._confined(path)

        def open_and_read_small() -> tuple[int, os.stat_result, bytes | None]:
            """One thread hop for the usual case: a small file is read right after it is opened."""
            dirfd, name = safe_write.open_parent(self._root, target, create=False)
            try:
                fd, st = open_regular(name, follow=False, dir_fd=dirfd, shown=target)
            finally:
                os.close(dirfd)
            if st.st_size > CHUNK:
                return fd, st, None
            try:
                return -1, st, read_fd_capped(fd, MAX_TEXT_BYTES, target, st.st_size)
            finally:
                os.close(fd)

        fd, st, data = await anyio.to_thread.run_sync(open_and_read_small, abandon_on_cancel=True)
        if data is None:  # a large file: chunk by chunk, so a cancel lands between chunks
            try:
                data = await read_fd(fd, MAX_TEXT_BYTES, target, st.st_size)
            finally:
                os.close(fd)
        return decode_text(data)

    async def read_window(self, path: Path, offset: int, limit: int, max_line_chars: int) -> TextWindow:
        target = self._confined(path)
        dirfd, name = await anyio.to_thread.run_sync(
            lambda: safe_write.open_parent(self._root, target, create=False), abandon_on_cancel=True)
        try:
            return await read_window(name, offset, limit, max_line_chars=max_line_chars, dir_fd=dirfd,
                                     follow=False, shown=target)
        finally:
            os.close(dirfd)

    async def write_text(self, path: Path, content: str, *, previous: str | None,
                         check: bool = True) -> WriteResult:
        """Atomic and symlink-safe; ``previous`` must still be the file's text (``check=False``: overwrite
        whatever is there)."""
        rel = display(self._root, path)
        try:
            target = self._confined(path)
        except safe_write.UnsafeTarget as exc:
            return WriteResult(False, exc.strerror)
        try:
            report = await safe_write.write_text(self._root, target, content,
                                                 expected=previous if check else safe_write.UNCHECKED)
        except safe_write.WriteConflict as exc:
            return WriteResult(False, f"{exc}; nothing was written", conflict=True)
        except IsADirectoryError:
            return WriteResult(False, f"{rel} is a directory; nothing was written")
        except OSError as exc:
            return WriteResult(False, f"{rel} could not be written: {exc.strerror or exc}")
        if report.links > 1:
            others = report.links - 1
            return WriteResult(True, f"{rel} had {others} other hard link{'s' if others > 1 else ''}; the write "
                                      f"replaced this name only, the other name{'s keep' if others > 1 else ' keeps'} "
                                      "the old content")
        return WriteResult(True)

    async def delete_file(self, path: Path) -> WriteResult:
        try:
            target = self._confined(path)
        except safe_write.UnsafeTarget as exc:
            return WriteResult(False, exc.strerror)
        try:
            await safe_write.delete(self._root, target)
        except IsADirectoryError:
            return WriteResult(False, f"{display(self._root, path)} is a directory; it was not deleted")
        except OSError as exc:
            return WriteResult(False, f"{display(self._root, path)} could not be deleted: {exc.strerror or exc}")
        return WriteResult(True)

    async def run_command(self, spec: CommandSpec) -> CommandResult:
        return await run_process(spec)

    async def request_permission(self, request: PermissionRequest) -> PermissionDecision | None:
        return None

    async def send_update(self, update: SessionUpdate) -> None:
        if self._on_update is not None:
            result = self._on_update(update)
            if inspect.isawaitable(result):
                await result

    async def release(self, task_id: str | None = None) -> None:
        return None
