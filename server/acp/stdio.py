"""Newline-delimited JSON-RPC over stdio, with the hygiene the SDK's own stdio transport lacks.

- ``claim_stdio`` keeps the real stdin/stdout for protocol frames only: fd 1 (and ``sys.stdout``) then
  point at stderr and fd 0 at ``/dev/null``, so a stray ``print``, a warning, a child process or the
  local model server can never write into (or read from) the protocol stream.
- ``LineTransport`` is an ``acp`` message ``Transport``: a malformed line gets a JSON-RPC error
  (-32700 / -32600) and the connection keeps serving, where the SDK would log and drop it, or crash its
  receive loop on a non-object frame.

Nothing here imports the SDK, so ``initialize`` can be answered before the SDK is loaded.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from ..jsonrpc_ids import top_level_id

log = logging.getLogger("agentls.acp")

DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024  # like the LSP frame cap (``--max-message-bytes``)
READ_CHUNK = 1024 * 1024  # the reader's buffer: a longer line is read in pieces of this size
MAX_IN_FLIGHT = 256  # requests being handled (or whose answers are unsent) before input stops being read
MAX_IN_FLIGHT_BYTES = 16 * 1024 * 1024  # the same, counted in bytes of their lines
EOF_DRAIN_SECONDS = 10.0  # at end of input, how long requests still running get to be answered
ECHO_CHARS = 200  # the most of a client's text an error repeats back
Message = dict[str, Any]


def claim_stdio() -> tuple[int, int]:
    """Private duplicates of fd 0 and fd 1 for the protocol; fd 1 becomes stderr and fd 0 /dev/null."""
    sys.stdout.flush()
    proto_in, proto_out = os.dup(0), os.dup(1)  # not inheritable (PEP 446): children never see them
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    return proto_in, proto_out


async def open_streams(in_fd: int, out_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_CHUNK)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(in_fd, "rb", 0))
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(), os.fdopen(out_fd, "wb", 0))
    transport.set_write_buffer_limits(high=256 * 1024)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


def error_frame(code: int, message: str, request_id: Any = None) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


ECHO_KEYS = frozenset({"input", "params", "method", "ctx"})  # where an error repeats what the client sent


def capped(value: Any, chars: int = 10 * ECHO_CHARS, depth: int = 0) -> Any:
    """``value`` with long strings, long lists and deep nesting cut: an error never echoes a client's large
    params back. What sits under an echo key (pydantic's ``input``, ...) is cut to ``ECHO_CHARS``, any other
    string (the server's own help text) to ``chars``."""
    if isinstance(value, str):
        return value if len(value) <= chars else f"{value[:chars]}… ({len(value):,} characters)"
    if depth > 8:
        return "…"
    if isinstance(value, dict):
        items = list(value.items())
        out = {str(k)[:ECHO_CHARS]: capped(v, ECHO_CHARS if k in ECHO_KEYS else chars, depth + 1)
               for k, v in items[:20]}
        if len(items) > 20:
            out["…"] = f"{len(items) - 20} more"
        return out
    if isinstance(value, (list, tuple)):
        cut = [capped(v, chars, depth + 1) for v in value[:20]]
        return cut + [f"… {len(value) - 20} more"] if len(value) > 20 else cut
    return value


def capped_error(message: Message) -> Message:
    """A response's ``error`` with its message and data capped (``capped``)."""
    error = message.get("error")
    if not isinstance(error, dict):
        return message
    out = dict(error)
    if isinstance(out.get("message"), str):
        out["message"] = capped(out["message"], 5 * ECHO_CHARS)
    if "data" in out:
        out["data"] = capped(out["data"])
    return {**message, "error": out}


def _id_key(value: Any) -> str:
    return json.dumps(value)


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def parse_frame(line: bytes) -> tuple[Message | None, Message | None]:
    """``(message, None)`` for a usable JSON-RPC message, else ``(None, error_response)``."""
    try:
        obj = json.loads(line)
    except ValueError as exc:
        return None, error_frame(-32700, f"Parse error: the line is not valid JSON ({exc})")
    except RecursionError:
        return None, error_frame(-32700, "Parse error: the line nests too deeply to be read", top_level_id(line))
    if not isinstance(obj, dict):
        return None, error_frame(-32600, "Invalid Request: each line must hold one JSON-RPC object "
                                         "(batches are not supported)")
    raw_id = obj.get("id")
    reply_id = raw_id if _valid_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0":
        return None, error_frame(-32600, 'Invalid Request: "jsonrpc" must be "2.0"', reply_id)
    if not _valid_id(raw_id):
        return None, error_frame(-32600, 'Invalid Request: "id" must be a string, an integer or null')
    method = obj.get("method")
    if "method" in obj:
        if not isinstance(method, str) or not method:
            return None, error_frame(-32600, 'Invalid Request: "method" must be a non-empty string', reply_id)
        params = obj.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return None, error_frame(-32600, 'Invalid Request: "params" must be an object', reply_id)
        return obj, None
    if "id" in obj and ("result" in obj or "error" in obj):
        return obj, None  # a response to one of our requests
    return None, error_frame(-32600, 'Invalid Request: a message needs a "method" (or is a response with '
                                     '"id" and "result"/"error")', reply_id)


class LineTransport:
    """One JSON object per line each way. ``observe`` sees every incoming message before it is handled."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 observe: Callable[[Message], None] | None = None,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._reader = reader
        self._writer = writer
        self._observe = observe
        self.max_line_bytes = max_line_bytes
        self._lock = asyncio.Lock()
        self._backlog: deque[Message] = deque()
        self._closed = False
        self._in_flight: dict[str, list[int]] = {}  # request id -> the line sizes of its unanswered requests
        self._in_flight_bytes = 0
        self._settled = asyncio.Event()  # set whenever an answer goes out
        self.on_eof: Callable[[], Awaitable[None]] | None = None  # ends the turns still running

    @property
    def in_flight(self) -> int:
        return sum(len(sizes) for sizes in self._in_flight.values())

    def _answered(self, message: Message) -> None:
        if "method" in message or not ("result" in message or "error" in message):
            return
        sizes = self._in_flight.get(_id_key(message.get("id")))
        if sizes:
            self._in_flight_bytes -= sizes.pop(0)
            if not sizes:
                del self._in_flight[_id_key(message.get("id"))]
        self._settled.set()

    async def send(self, message: Message) -> None:
        if "error" in message:
            message = capped_error(message)
        data = json.dumps(message, separators=(",", ":"), default=str).encode() + b"\n"
        try:
            async with self._lock:  # never interleave two frames
                if self._closed:
                    raise ConnectionError("the ACP connection is closed")
                self._writer.write(data)
                await self._writer.drain()
        finally:
            self._answered(message)

    async def _wait_for_room(self) -> None:
        """Backpressure: no more input is read while too many requests are unanswered (their answers wait
        for a client that does not read, or their handlers run)."""
        while self._in_flight and (self.in_flight >= MAX_IN_FLIGHT or self._in_flight_bytes >= MAX_IN_FLIGHT_BYTES):
            self._settled.clear()
            await self._settled.wait()

    async def _drain_at_eof(self) -> None:
        """End of input: end the turns, then let every request already read be answered (a while)."""
        if self.on_eof is not None:
            await self.on_eof()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + EOF_DRAIN_SECONDS
        while self._in_flight and not self._closed:
            self._settled.clear()
            try:
                await asyncio.wait_for(self._settled.wait(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                log.warning("end of input: %d request(s) still unanswered", self.in_flight)
                return

    async def notify(self, method: str, params: Message) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def unread(self, message: Message) -> None:
        """Hand a message already read back to the next ``receive`` (after the fast initialize)."""
        self._backlog.append(message)

    async def receive(self) -> Message | None:
        if self._backlog:
            return self._backlog.popleft()  # counted when it was first read
        while True:
            await self._wait_for_room()
            line, size, eof = await self._read_line()
            if size > self.max_line_bytes:
                log.warning("a line of %d bytes from the client was skipped", size)
                await self.send(error_frame(
                    -32600, f"Invalid Request: the line is {size:,} bytes; the limit is {self.max_line_bytes:,} "
                            "bytes (--max-message-bytes). Send large content as a file reference instead",
                    top_level_id(line)))
                continue
            line = line.strip()
            if not line:
                if eof:
                    await self._drain_at_eof()
                    return None
                continue
            message, error = parse_frame(line)
            if error is not None:
                log.warning("bad frame from the client: %s", error["error"]["message"][:ECHO_CHARS])
                await self.send(error)
                continue
            assert message is not None
            if self._observe is not None:
                self._observe(message)
            self._track(message, size)
            return message

    def _track(self, message: Message, size: int) -> None:
        if "method" in message and "id" in message:
            self._in_flight.setdefault(_id_key(message["id"]), []).append(size)
            self._in_flight_bytes += size

    async def _read_line(self) -> tuple[bytes, int, bool]:
        """``(line, its size, at end of input)``; of a line over the cap only the first 4 KB are kept."""
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                piece = await self._reader.readuntil(b"\n")
                eof: bool | None = False
            except asyncio.LimitOverrunError as exc:  # a long line: read it in pieces
                piece = await self._reader.readexactly(exc.consumed)
                eof = None
            except asyncio.IncompleteReadError as exc:  # EOF; a last line without a newline still counts
                piece, eof = exc.partial, True
            size += len(piece)
            if size <= self.max_line_bytes:
                chunks.append(piece)
            elif size - len(piece) <= self.max_line_bytes:  # just went over: keep only the head (for its id)
                chunks = [(b"".join(chunks) + piece[:4096])[:4096]]
            if eof is not None:
                return b"".join(chunks), size, eof

    async def close(self) -> None:
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._writer.close()
            except (OSError, RuntimeError):
                pass
