"""Our own stdio transport for MCP servers (docs/mcp.md "Processes and the stdio reader"), in place of the
SDK's ``stdio_client``, whose reader joins each chunk to the whole unfinished line (quadratic: a 60 MB
line took minutes and wedged every later call) and has no limit on a line.

- The reader is linear: it looks for the newline in each new chunk only and keeps the pieces. A line
  longer than ``max_line`` is thrown away as it arrives; when its id can be found (in its first or last
  64 KiB, or it is an answer while one request waits), that call gets an error saying how long the line was and what the limit is; the connection
  and every later call go on.
- The server runs in its own session with a marker of its own (agent/process_group.py), behind the
  launcher that has the kernel kill it if we die; it is stopped as the MCP spec says (stdin closed, a
  grace period, SIGTERM, SIGKILL), and then everything it started is killed too, a ``setsid`` child
  included. A ``CommandGroup`` registered while it runs, so every exit path of every face (the
  ``kill_all()`` of server/cli.py) ends it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import shutil
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
import anyio.abc

from .spec import ServerSpec
from ..process_group import CommandGroup, dies_with_us

log = logging.getLogger("agentls.mcp")

LINE_TOO_LONG = -32099  # our own code for "the answer was thrown away": connection.py words the error
EDGE = 65536  # how much of an oversized line is kept to find its id
CHUNK = 1 << 20
STDIN_GRACE = 2.0  # after stdin closes (the MCP spec's first step)
TERM_GRACE = 1.0  # after SIGTERM
_ID = rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")'
_FIRST_ID = re.compile(rb'^\s*\{(?:\s*"jsonrpc"\s*:\s*(?:"[^"]*"|-?\d+)\s*,?)*?\s*' + _ID)
_LAST_ID = re.compile(rb',\s*' + _ID + rb'\s*\}\s*$')
_ANSWER = re.compile(rb'^\s*\{(?:\s*"jsonrpc"\s*:\s*"[^"]*"\s*,)?\s*"(?:result|error)"\s*:')


def oversized_id(head: bytes, tail: bytes, waiting: set[int | str] | frozenset[int | str] = frozenset()
                 ) -> int | str | None:
    """The id of a JSON-RPC message from the start and the end of its line: a top-level ``"id"`` among
    the first keys (the SDKs write ``jsonrpc``, then ``id``) or as the last key; else, for an answer
    (``result`` or ``error`` first) while exactly one request is ``waiting``, that request's."""
    match = _FIRST_ID.match(head) or _LAST_ID.search(tail)
    if match is None:
        return next(iter(waiting)) if len(waiting) == 1 and _ANSWER.match(head) else None
    raw = match.group(1)
    try:
        return int(raw) if raw[:1] != b'"' else str(raw[1:-1].decode("utf-8", "replace"))
    except ValueError:
        return None


class LineSplitter:
    """Bytes in, whole lines out, linear in the input. ``feed`` returns what completed: a line
    (``bytes``), or ``(length, head, tail)`` for a line over ``limit`` that was not kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._head = b""
        self._tail = b""
        self._dropped = 0  # bytes of the current line thrown away (0: the line is kept)

    def feed(self, chunk: bytes) -> list[bytes | tuple[int, bytes, bytes]]:
        out: list[bytes | tuple[int, bytes, bytes]] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            self._add(chunk[start:] if end < 0 else chunk[start:end])
            if end < 0:
                return out
            if self._dropped:
                out.append((self._dropped, self._head, self._tail))
            else:
                out.append(b"".join(self._parts))
            self._parts, self._size, self._dropped, self._head, self._tail = [], 0, 0, b"", b""
            start = end + 1

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        if self._dropped:
            self._dropped += len(piece)
            if len(self._head) < EDGE:
                self._head += piece[:EDGE - len(self._head)]
            self._tail = (self._tail + piece)[-EDGE:]
        elif self._size + len(piece) > self.limit:
            whole = b"".join(self._parts) + piece
            self._head, self._tail, self._dropped = whole[:EDGE], whole[-EDGE:], len(whole)
            self._parts, self._size = [], 0
        else:
            self._parts.append(piece)
            self._size += len(piece)


def _parse(line: bytes) -> Any:
    import mcp_types
    from mcp.shared.message import SessionMessage

    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(line.decode("utf-8", "replace"), by_name=False)
    except ValueError as exc:
        return exc  # the session counts it as noise (connection.py ``_on_message``)
    return SessionMessage(message)


def _too_long(name: str, length: int, limit: int, head: bytes, tail: bytes, waiting: set[int | str]) -> Any:
    import mcp_types
    from mcp.shared.message import SessionMessage

    ident = oversized_id(head, tail, waiting)
    if ident is None:
        log.warning("MCP server %s sent a line of %d bytes (over the %d-byte limit) with no id to be found; "
                    "it was thrown away", name, length, limit)
        return None
    error = mcp_types.ErrorData(code=LINE_TOO_LONG, message=f"{length:,} bytes on one line; the limit is "
                                f"{limit:,} bytes (max_line_bytes)", data={"length": length, "limit": limit})
    return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=ident, error=error))


def _argv(spec: ServerSpec, env: dict[str, str]) -> list[str]:
    assert spec.command is not None
    found = shutil.which(spec.command, path=env.get("PATH"))
    if found is None and (os.sep in spec.command and os.path.isfile(spec.command)):
        found = spec.command  # not executable: the launcher reports it
    if found is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), spec.command)
    return dies_with_us([found, *spec.args])


@asynccontextmanager
async def stdio_transport(spec: ServerSpec, errlog: TextIO, max_line: int) -> AsyncIterator[tuple[Any, Any]]:
    """``(read, write)`` memory streams of ``SessionMessage`` for the SDK's ``Client``."""
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCRequest

    group = CommandGroup()
    env = get_default_environment() | dict(spec.env) | group.env
    try:
        process = await anyio.open_process(_argv(spec, env), env=env, stderr=errlog, cwd=spec.cwd,
                                           start_new_session=True)
    except BaseException:
        group.close()
        raise
    group.leader = process.pid
    to_session, read = anyio.create_memory_object_stream[Any](0)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    waiting: set[int | str] = set()  # ids of our requests not answered yet

    async def reader() -> None:
        assert process.stdout is not None
        lines = LineSplitter(max_line)
        async with to_session:
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError,
                                     OSError):
                while True:
                    for item in lines.feed(await process.stdout.receive(CHUNK)):
                        if isinstance(item, bytes):
                            message = _parse(item)
                        else:
                            message = _too_long(spec.name, item[0], max_line, item[1], item[2], waiting)
                        if message is not None and not isinstance(message, Exception):
                            waiting.discard(getattr(message.message, "id", None))
                        if message is not None:
                            await to_session.send(message)

    async def writer() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for item in from_session:
                    if isinstance(item.message, JSONRPCRequest):
                        waiting.add(item.message.id)
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode("utf-8", "replace"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await to_session.aclose()  # the session sees the connection end, not a request hanging

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read, write
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process, group)
            tg.cancel_scope.cancel()


async def _exited(process: anyio.abc.Process, seconds: float) -> bool:
    """Polled: ``wait()`` would also wait for the pipes' end, which a child holding them delays."""
    with anyio.move_on_after(seconds):
        while process.returncode is None:  # noqa: ASYNC110
            await anyio.sleep(0.01)
    return process.returncode is not None


async def _stop(process: anyio.abc.Process, group: CommandGroup) -> None:
    """stdin closed, a grace period, SIGTERM to its group, SIGKILL to all it started; never hangs."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    if not await _exited(process, STDIN_GRACE):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)
        await _exited(process, TERM_GRACE)
    await anyio.to_thread.run_sync(group.kill)  # a setsid child, a double fork, whatever is left
    group.close()  # only now: stopped half way (a second Ctrl-C), the exit's kill_all() still finds it
    await _exited(process, 2.0)
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdout is not None:
            await process.stdout.aclose()
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with contextlib.suppress(PermissionError):
            close()
