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
from collections.abc import Callable
from typing import Any

from agentls.server.jsonrpc_ids import top_level_id

log = logging.getLogger("agentls.acp")

READ_LIMIT = 50 * 1024 * 1024  # the SDK's default: large prompts with images fit
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
    reader = asyncio.StreamReader(limit=READ_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(in_fd, "rb", 0))
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(), os.fdopen(out_fd, "wb", 0))
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


def error_frame(code: int, message: str, request_id: Any = None) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


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
                 observe: Callable[[Message], None] | None = None) -> None:
        self._reader = reader
        self._writer = writer
        self._observe = observe
        self._lock = asyncio.Lock()
        self._backlog: deque[Message] = deque()
        self._closed = False

    async def send(self, message: Message) -> None:
        data = json.dumps(message, separators=(",", ":"), default=str).encode() + b"\n"
        async with self._lock:  # never interleave two frames
            if self._closed:
                raise ConnectionError("the ACP connection is closed")
            self._writer.write(data)
            await self._writer.drain()

    async def notify(self, method: str, params: Message) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def unread(self, message: Message) -> None:
        """Hand a message already read back to the next ``receive`` (after the fast initialize)."""
        self._backlog.append(message)

    async def receive(self) -> Message | None:
        if self._backlog:
            return self._backlog.popleft()
        while True:
            line = await self._read_line()
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            message, error = parse_frame(line)
            if error is not None:
                log.warning("bad frame from the client: %s", error["error"]["message"])
                await self.send(error)
                continue
            assert message is not None
            if self._observe is not None:
                self._observe(message)
            return message

    async def _read_line(self) -> bytes:
        chunks: list[bytes] = []
        while True:
            try:
                chunks.append(await self._reader.readuntil(b"\n"))
                return b"".join(chunks)
            except asyncio.LimitOverrunError as exc:  # a huge line: keep reading it in pieces
                chunks.append(await self._reader.readexactly(exc.consumed))
            except asyncio.IncompleteReadError as exc:  # EOF; a last line without a newline still counts
                chunks.append(exc.partial)
                return b"".join(chunks)

    async def close(self) -> None:
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._writer.close()
            except (OSError, RuntimeError):
                pass
