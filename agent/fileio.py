"""Reading files that may be hostile: only regular files, never a blocking open, never more than asked.

A workspace can hold a FIFO (an ``open`` for reading blocks until a writer comes, for ever), a character
device (``/dev/zero`` never ends), a socket, or a regular file of gigabytes. Every reader of workspace
or configuration files goes through here:

- the type is checked with ``stat`` before anything is opened (a device is never opened), the open uses
  ``O_NONBLOCK`` (a FIFO swapped in meanwhile cannot block it) and ``fstat`` checks the type again;
- anything that is not a regular file raises ``NotRegularFile``, naming what it is;
- reads are bounded: a whole-file read stops at a byte cap (``FileTooLarge``), a window of lines streams
  only as far as it needs, in chunks, so a cancel (an interrupt, shutdown) lands between two of them.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread

MAX_TEXT_BYTES = 16 * 1024 * 1024  # whole-file reads (edits, writes, the editor's fallback): 16 MiB
MAX_SCAN_BYTES = 256 * 1024 * 1024  # a window of lines never reads further into a file than this
CHUNK = 1024 * 1024
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket (or a directory where a file was expected)."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(errno.EINVAL, f"{os.fspath(path)} is {kind}, not a regular file; it is not read")
        self.path = os.fspath(path)
        self.kind = kind


class FileTooLarge(OSError):
    def __init__(self, path: str | os.PathLike[str], size: int, cap: int) -> None:
        super().__init__(errno.EFBIG, f"{os.fspath(path)} is {human_size(size)}; the limit for reading it whole is "
                                      f"{human_size(cap)}")
        self.path = os.fspath(path)
        self.size = size
        self.cap = cap


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{n:,} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n:,} bytes"  # pragma: no cover


def kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"  # pragma: no cover


def check_regular(path: str | os.PathLike[str], st: os.stat_result) -> None:
    kind = kind_of(st.st_mode)
    if kind == "a directory":
        raise IsADirectoryError(errno.EISDIR, f"{os.fspath(path)} is a directory", os.fspath(path))
    if kind is not None:
        raise NotRegularFile(path, kind)


def open_regular(path: str | os.PathLike[str], *, follow: bool = True, dir_fd: int | None = None,
                 shown: str | os.PathLike[str] | None = None) -> tuple[int, os.stat_result]:
    """``(fd, fstat)`` of a regular file opened for reading; raises ``NotRegularFile`` for anything else.

    ``follow=False`` refuses a symlink at the last component (``O_NOFOLLOW``: ``ELOOP``). Nothing that is
    not a regular file is opened (``stat`` first); the open is non-blocking and re-checked with ``fstat``.
    """
    name = shown if shown is not None else path
    before = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow)
    check_regular(name, before)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        after = os.fstat(fd)
        check_regular(name, after)
    except BaseException:
        os.close(fd)
        raise
    return fd, after


class _Capped:
    """The chunks of one bounded read: ``want`` bytes next, ``add`` what came (False at the end of the file)."""

    def __init__(self, cap: int, name: str | os.PathLike[str], size: int) -> None:
        if size > cap:
            raise FileTooLarge(name, size, cap)
        self.cap, self.name, self.total = cap, name, 0
        self.parts: list[bytes] = []

    def want(self) -> int:
        return min(CHUNK, self.cap + 1 - self.total)

    def add(self, data: bytes) -> bool:
        if not data:
            return False
        self.parts.append(data)
        self.total += len(data)
        if self.total > self.cap:  # a file growing while read counts too
            raise FileTooLarge(self.name, self.total, self.cap)
        return True


def read_fd_capped(fd: int, cap: int, name: str | os.PathLike[str], size: int) -> bytes:
    """At most ``cap`` bytes of an open file, else ``FileTooLarge`` (a file growing while read counts too)."""
    read = _Capped(cap, name, size)
    while read.add(os.read(fd, read.want())):
        pass
    return b"".join(read.parts)


def read_small(path: str | os.PathLike[str], cap: int = 1024 * 1024, *, follow: bool = True) -> bytes:
    """A small regular file, whole (configuration, ``.gitignore``): synchronous, bounded, never blocking."""
    fd, st = open_regular(path, follow=follow)
    try:
        return read_fd_capped(fd, cap, path, st.st_size)
    finally:
        os.close(fd)


async def read_fd(fd: int, cap: int, name: str | os.PathLike[str], size: int) -> bytes:
    """Like ``read_fd_capped``, one thread hop per chunk (a cancel lands between chunks)."""
    read = _Capped(cap, name, size)
    while read.add(await anyio.to_thread.run_sync(os.read, fd, read.want())):
        pass
    return b"".join(read.parts)


def decode_text(data: bytes) -> str:
    """UTF-8 with universal newlines (what ``open(..., "r")`` gives), raising ``UnicodeDecodeError``."""
    text = data.decode("utf-8")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


@dataclass
class TextWindow:
    """Some lines of a file: ``lines[0]`` is line ``offset``; ``total`` is known when the file was read whole."""

    lines: list[str]
    offset: int
    more: bool  # lines follow the window
    total: int | None = None
    size: int | None = None  # bytes on disk, when known
    cut: dict[int, int | None] = field(default_factory=dict)  # line number -> its full length (None: unknown)
    binary: bool = False
    stopped: bool = False  # the scan stopped at its byte cap before reaching the window's end

    @classmethod
    def of_text(cls, text: str, offset: int, limit: int, max_line_chars: int) -> TextWindow:
        lines = text.splitlines()
        chosen = lines[offset - 1: offset - 1 + limit]
        window = cls([], offset, offset - 1 + len(chosen) < len(lines), total=len(lines),
                     binary="\x00" in text[:8192])
        for n, line in enumerate(chosen, start=offset):
            if len(line) > max_line_chars:
                window.cut[n] = len(line)
                line = line[:max_line_chars]
            window.lines.append(line)
        return window


class _LineReader:
    """Splits a byte stream into lines, holding at most one chunk and ``max_line_bytes`` of one line."""

    def __init__(self, fd: int, max_line_bytes: int, first: bytes) -> None:
        self.fd = fd
        self.max_line_bytes = max_line_bytes
        self.buffer = first
        self.pos = 0
        self.eof = not first
        self.read = len(first)

    async def next_line(self, keep: bool) -> tuple[bytes, bool] | None:
        """``(line, was_cut)``, or None after the last line; ``keep=False`` drops the line's bytes."""
        kept: list[bytes] = []
        size = 0
        cut = False
        started = False
        while True:
            at = self.buffer.find(b"\n", self.pos)
            end = at if at >= 0 else len(self.buffer)
            if end > self.pos or at >= 0:
                started = True
            if keep and not cut and end > self.pos:
                room = self.max_line_bytes - size
                piece = self.buffer[self.pos: min(end, self.pos + room + 1)]
                if len(piece) > room:
                    piece, cut = piece[:room], True
                kept.append(piece)
                size += len(piece)
            if at >= 0:
                self.pos = at + 1
                break
            self.buffer, self.pos = b"", 0
            if self.eof:
                if not started:
                    return None
                break
            data = await anyio.to_thread.run_sync(os.read, self.fd, CHUNK)
            self.read += len(data)
            self.eof = not data
            self.buffer = data
        line = b"".join(kept)
        return (line[:-1] if line.endswith(b"\r") else line), cut

    async def at_end(self) -> bool:
        """Whether nothing follows (reads at most one more chunk, never a whole line)."""
        if self.pos < len(self.buffer):
            return False
        if self.eof:
            return True
        data = await anyio.to_thread.run_sync(os.read, self.fd, CHUNK)
        self.read += len(data)
        self.eof = not data
        self.buffer, self.pos = data, 0
        return self.eof


async def read_window(path: str | os.PathLike[str], offset: int, limit: int, *, max_line_chars: int,
                      dir_fd: int | None = None, follow: bool = True, max_scan: int = MAX_SCAN_BYTES,
                      shown: str | os.PathLike[str] | None = None) -> TextWindow:
    """Lines ``offset .. offset+limit-1`` of a regular file, streamed: nothing past the window is read (but
    the next line's start, to know whether more follow), nor past ``max_scan`` bytes. A NUL byte in the
    first 8 KB marks the file binary and stops there. Raises ``UnicodeDecodeError`` for text that is not UTF-8."""
    fd, st = await anyio.to_thread.run_sync(
        lambda: open_regular(path, follow=follow, dir_fd=dir_fd, shown=shown), abandon_on_cancel=True)
    try:
        first = await anyio.to_thread.run_sync(os.read, fd, CHUNK)
        window = TextWindow([], offset, False, size=st.st_size)
        if b"\x00" in first[:8192]:
            window.binary = True
            return window
        reader = _LineReader(fd, max_line_chars * 4, first)
        number = 0
        while True:
            number += 1
            if number >= offset + limit:  # the window is full: more lines only if any byte follows
                window.more = not await reader.at_end()
                if not window.more:
                    window.total = number - 1
                return window
            if reader.read > max_scan:
                window.more = window.stopped = True
                return window
            wanted = offset <= number
            got = await reader.next_line(keep=wanted)
            if got is None:
                window.total = number - 1
                return window
            if not wanted:
                continue
            raw, cut = got
            text = raw.decode("utf-8", errors="ignore" if cut else "strict")
            if cut or len(text) > max_line_chars:
                window.cut[number] = None if cut else len(text)
                text = text[:max_line_chars]
            window.lines.append(text)
    finally:
        os.close(fd)


def lstat_kind(path: Path) -> str | None:
    """What is at ``path`` when it is not a regular file (``None``: a regular file or nothing at all)."""
    try:
        st = path.lstat()
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        try:
            st = path.stat()
        except OSError:
            return None
    kind = kind_of(st.st_mode)
    return None if kind == "a directory" else kind
