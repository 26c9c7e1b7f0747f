"""The HTTP/1.1 layer of the scripted provider: request parsing, response heads, timed and aborted writes."""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from contextlib import suppress
from dataclasses import dataclass
from http import HTTPStatus


@dataclass
class HttpRequest:
    method: str
    path: str  # without the query string
    headers: dict[str, str]  # lower-case names
    body: bytes
    keep_alive: bool


class BadRequest(Exception):
    """The bytes on the connection are not an HTTP/1.x request."""


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Overloaded" if status == 529 else "Unknown"


def chunk(data: bytes) -> bytes:
    """One chunk of a ``Transfer-Encoding: chunked`` body."""
    return b"%x\r\n%b\r\n" % (len(data), data)


LAST_CHUNK = b"0\r\n\r\n"


def response_head(status: int, ctype: str, extra: dict[str, str], keep: bool, length: int | None) -> bytes:
    """Status line and headers; ``length=None`` means a chunked body (SSE)."""
    lines = [f"HTTP/1.1 {status} {reason(status)}", f"content-type: {ctype}"]
    if length is None:
        lines += ["transfer-encoding: chunked", "cache-control: no-cache"]
    else:
        lines.append(f"content-length: {length}")
    lines.extend(f"{k}: {v}" for k, v in extra.items())
    lines.append("connection: keep-alive" if keep else "connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class Conn:
    """One client connection: its streams, lookahead bytes and a disconnect watch used while sleeping."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.prefix = b""
        self.watch: asyncio.Task[bytes] | None = None
        self.gone = False  # the client went away (seen while sleeping or at the end of a response)

    async def read_request(self) -> HttpRequest | None:
        """The next request, or None when the client closed the connection between requests."""
        try:
            head = self.prefix + await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        self.prefix = b""
        lines = head[:-4].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise BadRequest(f"malformed request line {lines[0][:100]!r}")
        method, target, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise BadRequest(f"malformed header line {line[:100]!r}")
            headers[name.strip().lower()] = value.strip()
        if headers.get("expect", "").lower() == "100-continue":
            await self.send(b"HTTP/1.1 100 Continue\r\n\r\n")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = await self._read_chunked()
        else:
            try:
                length = int(headers.get("content-length") or 0)
            except ValueError:
                raise BadRequest("invalid Content-Length") from None
            body = await self.reader.readexactly(length)
        connection = headers.get("connection", "").lower()
        keep = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        return HttpRequest(method, target.split("?", 1)[0], headers, body, keep)

    async def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            line = await self.reader.readuntil(b"\r\n")
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise BadRequest("invalid chunk size") from None
            if size == 0:
                while await self.reader.readuntil(b"\r\n") != b"\r\n":
                    pass
                return b"".join(parts)
            parts.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)

    async def send(self, *parts: bytes) -> None:
        self.writer.write(b"".join(parts))
        await self.writer.drain()

    async def pause(self, seconds: float) -> bool:
        """Sleep ``seconds``; False as soon as the client goes away."""
        deadline = time.monotonic() + seconds
        while True:
            if self.writer.is_closing():
                self.gone = True
                return False
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            if self.watch is None:
                self.watch = asyncio.ensure_future(self.reader.read(1))
            done, _ = await asyncio.wait({self.watch}, timeout=left)
            if done and not self._take_watch():
                return False

    def _take_watch(self) -> bool:
        w, self.watch = self.watch, None
        if w is None or w.cancelled():
            return True
        if w.exception() is not None:
            self.gone = True
            return False
        data = w.result()
        self.prefix += data  # a pipelined byte goes back in front of the next request
        self.gone = self.gone or not data
        return bool(data)

    async def end_watch(self) -> bool:
        """Stop the disconnect watch; False if it saw the client leave."""
        if self.watch is None:
            return True
        if not self.watch.done():
            self.watch.cancel()
        await asyncio.wait({self.watch})
        return self._take_watch()

    def abort(self) -> None:
        """Close with a TCP RST (SO_LINGER 0), dropping anything unsent."""
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            with suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()

    def close(self) -> None:
        if self.watch is not None:
            self.watch.cancel()
        if not self.writer.is_closing():
            self.writer.close()
