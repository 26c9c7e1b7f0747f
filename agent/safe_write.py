"""Writing workspace files without being turned against the user.

A write replaces the file atomically and never follows a symlink it did not choose:

- the parent directories are opened one by one from the workspace root with ``O_NOFOLLOW|O_DIRECTORY``
  (a directory swapped for a symlink on the way is refused, not followed), and created the same way;
- the content goes to a fresh temporary name in the target's directory, opened
  ``O_CREAT|O_EXCL|O_NOFOLLOW`` (a name someone planted, symlink or not, is never opened), with the
  target's mode (and owner, when allowed), then ``fsync``, ``rename`` over the target, ``fsync`` of the
  directory. A target that is a symlink, a directory, a FIFO or a device is refused;
- ``expected`` is the text the writer based its change on: under a lock of the directory (in this process,
  then ``flock`` across processes) the file is compared with it, and a file changed since it was read
  raises ``WriteConflict`` instead of being overwritten.

``lock_for(path)`` is the one lock per path of this process that read-modify-write callers hold around
their read and their write.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import uuid
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from . import line_endings
from .fileio import MAX_TEXT_BYTES, NotRegularFile, decode_text, kind_of, open_regular, read_fd_capped

FLOCK_TIMEOUT = 30.0
TEMP_ATTEMPTS = 8
_locks: weakref.WeakValueDictionary[str, anyio.Lock] = weakref.WeakValueDictionary()


class WriteConflict(Exception):
    """The file changed (or appeared, or vanished) since the writer read it; nothing was written."""


class UnsafeTarget(OSError):
    """The write would go through a symlink, into a special file, or outside the root; nothing was written."""


class _Unchecked:
    pass


UNCHECKED = _Unchecked()  # ``expected`` for a write that replaces whatever is there


@dataclass(frozen=True)
class WriteReport:
    created: bool
    links: int  # hard links the old file had (its other names keep the old content)


def lock_for(path: Path | str) -> anyio.Lock:
    """The process-wide lock of one path (held by whoever reads, changes and writes it back)."""
    key = os.fspath(path)
    lock = _locks.get(key)
    if lock is None:
        lock = _locks[key] = anyio.Lock()
    return lock


def _umask() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


UMASK = _umask()


def temp_name(name: str) -> str:
    """A fresh hidden name next to ``name`` (unpredictable, so nobody can plant anything there in advance)."""
    token = uuid.uuid4().hex[:12]
    base = name if len(name.encode()) <= 180 else "file"
    return f".{base}.agentls-{token}.tmp"


def open_parent(root: Path, path: Path, *, create: bool) -> tuple[int, str]:
    """``(fd of the parent directory, last name)``, walking from ``root`` without following symlinks."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        raise UnsafeTarget(errno.EPERM, f"{path} is outside the workspace {root}") from None
    if not parts:
        raise IsADirectoryError(errno.EISDIR, f"{path} is the workspace root", str(path))
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate(parts[:-1]):
            try:
                nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                where = root.joinpath(*parts[: i + 1])
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISLNK(st.st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, f"{where} is not a directory", str(where)) from None
                raise UnsafeTarget(errno.ELOOP, f"{where} became a symlink; nothing is read or written through "
                                                "it") from None
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _current(dirfd: int, name: str, shown: Path) -> os.stat_result | None:
    """The target's ``lstat`` (None when absent); raises for anything but a regular file."""
    try:
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeTarget(errno.ELOOP, f"{shown} became a symlink; nothing was written through it")
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, f"{shown} is a directory", str(shown))
    kind = kind_of(st.st_mode)
    if kind is not None:
        raise NotRegularFile(shown, kind)
    return st


def _read_bytes(dirfd: int, name: str, shown: Path) -> bytes | None:
    fd, st = open_regular(name, follow=False, dir_fd=dirfd, shown=shown)
    try:
        return read_fd_capped(fd, MAX_TEXT_BYTES, shown, st.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)


def _decoded(data: bytes | None) -> str | None:
    try:
        return None if data is None else decode_text(data)
    except UnicodeDecodeError:
        return None


def _endings_kept(raw: bytes | None, data: bytes) -> bytes:
    """``data`` with each kept line's own ending from ``raw`` (agent/line_endings.py): text is read with
    universal newlines, so a write puts the file's ``\r\n`` and lone ``\r`` back, line by line."""
    if raw is None or b"\r" not in raw or b"\r" in data:
        return data
    try:
        return line_endings.restore(raw.decode("utf-8"), data.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        return data.replace(b"\n", b"\r\n") if raw.count(b"\r\n") * 2 > raw.count(b"\n") else data


def _replace(dirfd: int, name: str, data: bytes, expected: str | None | _Unchecked, shown: Path) -> WriteReport:
    st = _current(dirfd, name, shown)
    try:
        raw = _read_bytes(dirfd, name, shown) if st is not None else None
    except PermissionError:  # a file this process may write but not read: overwritten unchecked, as it is
        if not isinstance(expected, _Unchecked):
            raise
        raw = None
    if not isinstance(expected, _Unchecked):
        if st is None and expected is not None:
            raise WriteConflict(f"{shown} was deleted since it was read")
        if st is not None and expected is None:
            raise WriteConflict(f"{shown} was created by someone else since it was checked")
        if st is not None and _decoded(raw) != expected:
            raise WriteConflict(f"{shown} changed on disk since it was read (another program or agentls process "
                                "wrote it)")
    data = _endings_kept(raw, data)  # every line that is kept keeps its own ending
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~UMASK
    for _ in range(TEMP_ATTEMPTS):
        tmp = temp_name(name)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=dirfd)
            break
        except FileExistsError:  # taken (or planted): never opened, try another name
            continue
    else:
        raise UnsafeTarget(errno.EEXIST, f"no free temporary name next to {shown} after {TEMP_ATTEMPTS} tries")
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            if st is not None and (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                with contextlib.suppress(OSError):
                    os.fchown(fd, st.st_uid, st.st_gid)
                    os.fchmod(fd, mode)  # chown clears set-id bits
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dirfd, dst_dir_fd=dirfd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dirfd)
        raise
    with contextlib.suppress(OSError):
        os.fsync(dirfd)
    return WriteReport(created=st is None, links=st.st_nlink if st is not None else 0)


@contextlib.asynccontextmanager
async def _directory_lock(dirfd: int, key: str) -> AsyncIterator[None]:
    """This process's lock of the directory, then ``flock`` on it (other agentls processes), polled: no
    thread ever blocks on it."""
    async with lock_for(key + os.sep):
        delay = 0.001
        waited = 0.0
        locked = False
        while True:
            try:
                fcntl.flock(dirfd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                locked = True
                break
            except BlockingIOError:
                if waited >= FLOCK_TIMEOUT:
                    raise WriteConflict(f"another process kept {key} locked for {FLOCK_TIMEOUT:g} s") from None
                await anyio.sleep(delay)
                waited += delay
                delay = min(delay * 2, 0.05)
            except OSError:  # a file system without flock: the in-process lock and the comparison remain
                break
        try:
            yield
        finally:
            if locked:
                with contextlib.suppress(OSError):
                    fcntl.flock(dirfd, fcntl.LOCK_UN)


async def write_text(root: Path, path: Path, content: str, *,
                     expected: str | None | _Unchecked = UNCHECKED) -> WriteReport:
    """Replace ``path`` (inside ``root``, symlinks already resolved) with ``content`` as UTF-8."""
    data = content.encode("utf-8")
    dirfd, name = await anyio.to_thread.run_sync(lambda: open_parent(root, path, create=True))
    try:
        async with _directory_lock(dirfd, str(path.parent)):
            return await anyio.to_thread.run_sync(_replace, dirfd, name, data, expected, path)
    finally:
        os.close(dirfd)


async def delete(root: Path, path: Path) -> bool:
    """Remove the file at ``path`` (a symlink there is removed, never followed); False when absent."""
    try:
        dirfd, name = await anyio.to_thread.run_sync(lambda: open_parent(root, path, create=False))
    except FileNotFoundError:
        return False
    try:
        async with _directory_lock(dirfd, str(path.parent)):
            try:
                await anyio.to_thread.run_sync(lambda: os.unlink(name, dir_fd=dirfd))
            except FileNotFoundError:
                return False
            return True
    finally:
        os.close(dirfd)
