"""A stdio server's stderr: drained all the time (a server that floods it never blocks), its tail kept
for the messages that explain a failure."""

from __future__ import annotations

import os
from collections import deque
from typing import TextIO

import anyio

TAIL_BYTES = 4096
CHUNK = 65536


class StderrTail:
    """A pipe for the child's stderr; ``drain()`` reads it until the child closes its end."""

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        self._limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.total = 0
        self._read_fd, write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        self.child_end: TextIO | None = os.fdopen(write_fd, "w")
        self.done = anyio.Event()

    def close_child_end(self) -> None:
        """Once the child is spawned (it holds its own copy), or when it could not be."""
        if self.child_end is not None:
            self.child_end.close()
            self.child_end = None

    def _keep(self, data: bytes) -> None:
        self.total += len(data)
        self._chunks.append(data)
        self._size += len(data)
        while self._size - len(self._chunks[0]) >= self._limit:
            self._size -= len(self._chunks.popleft())

    async def drain(self) -> None:
        fd = self._read_fd
        try:
            while True:
                try:
                    data = os.read(fd, CHUNK)
                except BlockingIOError:
                    await anyio.wait_readable(fd)
                    continue
                if not data:
                    return
                self._keep(data)
        except OSError:
            return
        finally:
            self.close_child_end()
            self._read_fd = -1
            os.close(fd)
            self.done.set()

    def tail(self, lines: int = 12) -> str:
        """The last lines the server wrote to stderr (at most the kept bytes)."""
        text = b"".join(self._chunks)[-self._limit:].decode("utf-8", "replace")
        kept = [line for line in text.splitlines() if line.strip()][-lines:]
        return "\n".join(kept)
