"""LSP base protocol on stdio, on asyncio pipes: ``Content-Length`` framing and JSON-RPC envelope checks.

Standard library only, so the first answer goes out before pygls is imported. Whatever a client
sends, ``read()`` returns a message or a ``WireError`` to answer (malformed JSON -32700, not a
JSON-RPC message -32600, a message over the size limit -32600) and keeps reading: the stream stays
in sync as long as the ``Content-Length`` headers are right.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from dataclasses import dataclass
from collections.abc import Sized
from typing import Any, BinaryIO

from ..jsonrpc_ids import top_level_id

log = logging.getLogger("agentls.lsp.wire")

DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024
HEADER_LIMIT = 64 * 1024
OUTPUT_HIGH_WATER = 256 * 1024  # unsent output above which no more input is read (backpressure)
MAX_IN_FLIGHT = 256  # request handlers running above which no more input is read
METHOD_CHARS = 200  # a longer method name is not looked up (no method is that long) nor echoed whole
ERROR_MESSAGE_CHARS = 800  # an error message is cut here, so it never echoes a client's large params

MsgId = int | str


@dataclass(frozen=True)
class WireError:
    """An incoming message that cannot be handled; answered with ``code`` (id null when unknown)."""

    code: int
    message: str
    id: MsgId | None = None


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def check_envelope(data: Any) -> dict[str, Any] | WireError:
    """A JSON-RPC 2.0 request, notification or response, or the -32600 error for it."""
    if isinstance(data, list):
        return WireError(-32600, "batch messages (JSON arrays) are not part of LSP; send one message per frame")
    if not isinstance(data, dict):
        return WireError(-32600, f"a JSON-RPC message must be a JSON object, not {type(data).__name__}")
    msg_id = data.get("id")
    known_id = msg_id if _valid_id(msg_id) else None
    if data.get("jsonrpc") != "2.0":
        return WireError(-32600, "'jsonrpc' must be \"2.0\"", known_id)
    if "id" in data and not _valid_id(msg_id):
        return WireError(-32600, "'id' must be a number or a string")
    if "method" in data:
        method = data["method"]
        if not isinstance(method, str) or not method:
            return WireError(-32600, "'method' must be a non-empty string", known_id)
        if len(method) > METHOD_CHARS:
            return WireError(-32601, f"method not found: {method[:METHOD_CHARS]}… ({len(method):,} characters)",
                             known_id)
        params = data.get("params")
        if params is not None and not isinstance(params, dict | list):
            if known_id is not None:
                return WireError(-32602, f"{method}: 'params' must be an object", known_id)
            return WireError(-32600, f"{method}: 'params' must be an object")
        return data
    if "id" in data and ("result" in data or "error" in data):
        return data
    return WireError(-32600, "a message needs a 'method' (request or notification), or an 'id' with a "
                             "'result' or an 'error' (response)", known_id)


def frame(obj: Any) -> bytes:
    body = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def error_frame(msg_id: MsgId | None, code: int, message: str) -> bytes:
    if len(message) > ERROR_MESSAGE_CHARS:
        message = f"{message[:ERROR_MESSAGE_CHARS]}… (cut; {len(message):,} characters)"
    return frame({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def private_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The protocol's own copies of stdin and stdout; fd 1 then points at stderr and fd 0 at /dev/null,
    so a stray print or a child process that inherits them cannot corrupt or eat the stream."""
    sys.stdout.flush()
    in_fd, out_fd = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return os.fdopen(in_fd, "rb", buffering=0), os.fdopen(out_fd, "wb", buffering=0)


class _WriteProtocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.lost = asyncio.get_running_loop().create_future()
        self.writable = asyncio.Event()
        self.writable.set()

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.writable.set()
        if not self.lost.done():
            self.lost.set_result(None)


class StdioChannel:
    """One framed JSON-RPC stream. ``write(bytes)`` makes it a pygls writer too."""

    def __init__(self, reader: asyncio.StreamReader, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self._reader = reader
        self.max_bytes = max_bytes
        self._transport: asyncio.WriteTransport | None = None
        self._protocol: _WriteProtocol | None = None
        self._sync_out: BinaryIO | None = None
        self.closed = False

    @classmethod
    async def open(cls, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, stdin: BinaryIO | None = None,
                   stdout: BinaryIO | None = None) -> StdioChannel:
        loop = asyncio.get_running_loop()
        if stdin is None or stdout is None:
            stdin, stdout = private_stdio()
        reader = asyncio.StreamReader(limit=HEADER_LIMIT)
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        except ValueError:  # a regular file: read it whole (it never blocks for long)
            reader.feed_data(stdin.read())
            reader.feed_eof()
        channel = cls(reader, max_bytes)
        try:
            transport, protocol = await loop.connect_write_pipe(_WriteProtocol, stdout)
            transport.set_write_buffer_limits(high=OUTPUT_HIGH_WATER)
            channel._transport, channel._protocol = transport, protocol
        except ValueError:
            channel._sync_out = stdout
        return channel

    # ----------------------------------------------------------------- reading
    async def room(self, in_flight: Sized) -> None:
        """Backpressure: return once the client reads its output (unsent output under the high-water
        mark) and fewer than ``MAX_IN_FLIGHT`` handlers run; until then no more input is read, so a client
        that pipelines without reading fills its own pipe, not the server's memory."""
        while True:
            if self._protocol is not None and not self._protocol.writable.is_set():
                await self._protocol.writable.wait()
                continue
            if len(in_flight) < MAX_IN_FLIGHT:
                return
            await asyncio.sleep(0.01)

    async def read(self) -> dict[str, Any] | WireError | None:
        """The next message, a ``WireError`` to answer, or None at end of input."""
        try:
            headers, bad = await self._read_headers()
            if headers is None:
                return None
            length_text = headers.get("content-length")
            if length_text is None or not length_text.isdigit():
                return WireError(-32700, "a message header without a valid Content-Length; the frame was skipped")
            length = int(length_text)
            if length > self.max_bytes:
                return await self._skip(length)
            body = await self._reader.readexactly(length)
        except asyncio.IncompleteReadError:
            return None
        if bad:
            log.warning("ignored malformed header line(s): %s", bad)
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            return WireError(-32700, f"the message is not valid JSON ({exc}); it was ignored")
        except RecursionError:
            return WireError(-32700, "the message nests too deeply to be read; it was ignored", top_level_id(body))
        return check_envelope(data)

    async def _read_headers(self) -> tuple[dict[str, str] | None, list[str]]:
        headers: dict[str, str] = {}
        bad: list[str] = []
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
                bad.append("(an overlong header line)")
                continue
            except asyncio.IncompleteReadError:
                return None, bad
            text = line.decode("ascii", "replace").strip()
            if not text:
                if headers or bad:
                    return headers, bad
                continue  # blank lines between frames
            name, sep, value = text.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
            else:
                bad.append(text[:80])

    async def _skip(self, length: int) -> WireError | None:
        head = await self._reader.readexactly(min(length, 4096))
        remaining = length - len(head)
        while remaining:
            chunk = await self._reader.read(min(remaining, 1 << 20))
            if not chunk:
                return None
            remaining -= len(chunk)
        msg_id = top_level_id(head)
        return WireError(-32600, f"the message is {length:,} bytes; the limit is {self.max_bytes:,} bytes. "
                                 "Send large content as a file reference instead", msg_id)

    def end_input(self) -> None:
        """Act as if the client closed its end (its process is gone)."""
        self._reader.feed_eof()

    # ----------------------------------------------------------------- writing
    def write(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            if self._transport is not None:
                if self._transport.is_closing():
                    self.closed = True
                    return
                self._transport.write(data)
            elif self._sync_out is not None:
                self._sync_out.write(data)
                self._sync_out.flush()
        except (OSError, RuntimeError) as exc:
            log.info("the client's end of stdout is gone: %s", exc)
            self.closed = True

    def send(self, obj: Any) -> None:
        self.write(frame(obj))

    def send_error(self, error: WireError) -> None:
        self.write(error_frame(error.id, error.code, error.message))

    def close(self) -> None:
        """pygls calls this on ``exit``; the real close is ``aclose``."""

    async def aclose(self, timeout: float = 5.0) -> None:
        """Flush what is buffered, then close stdout."""
        self.closed = True
        if self._transport is not None and self._protocol is not None:
            self._transport.close()
            try:
                await asyncio.wait_for(asyncio.shield(self._protocol.lost), timeout)
            except TimeoutError:
                self._transport.abort()
