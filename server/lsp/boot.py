"""The message pump: answer ``initialize`` at once, then load pygls and the core and serve.

``initialize`` is answered from ``capabilities.py`` (standard library only) before pygls, lsprotocol
and the core are imported, which is most of the start-up time. Messages that arrive meanwhile wait
in the pipe and are handled in order. Before ``initialize`` every request gets -32002.

The pump ends on ``exit``, at end of input, or when the editor's process (``processId``) is gone. Either way every running turn is cancelled (each persists
its transcript), the sessions are closed, and the process exits with nothing left running.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING, Any

from agentls.agent.version import __version__
from .capabilities import initialize_result
from .wire import StdioChannel, WireError

if TYPE_CHECKING:
    from .server import AgentServer

log = logging.getLogger("agentls.lsp")


def _initialize_problem(params: Any) -> str | None:
    if not isinstance(params, dict):
        return "initialize: 'params' must be an object"
    if not isinstance(params.get("capabilities"), dict):
        return "initialize: 'capabilities' must be an object"
    pid = params.get("processId")
    if pid is not None and (isinstance(pid, bool) or not isinstance(pid, int)):
        return "initialize: 'processId' must be a number or null"
    return None


PARENT_POLL_SECONDS = 3.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def _watch_parent(pid: int, channel: StdioChannel) -> None:
    """LSP: the server exits when the process that started it (``processId``) is gone."""
    while True:
        await asyncio.sleep(PARENT_POLL_SECONDS)
        if not _alive(pid):
            log.warning("the editor (pid %d) is gone: shutting down", pid)
            channel.end_input()
            return


class _Running:
    """What the message loop started, for the shutdown that always follows it."""

    server: AgentServer | None = None
    watcher: asyncio.Task[None] | None = None


async def serve(max_bytes: int) -> int:
    channel = await StdioChannel.open(max_bytes)
    running = _Running()
    try:
        code = await _loop(channel, running)
    except Exception:  # never a silent hang: close everything and exit non-zero
        log.exception("the message loop failed; shutting down")
        code = 1
    if running.watcher is not None:
        running.watcher.cancel()
    server = running.server
    if server is not None:
        if server.protocol.exit_requested and not server.protocol.shutdown_requested:
            code = 1
        await server.aclose()
        await server.protocol.drain()
    await channel.aclose()
    return code


async def _loop(channel: StdioChannel, running: _Running) -> int:
    """Read and dispatch until end of input or exit."""
    server: AgentServer | None = None
    code = 0
    while True:
        if server is not None:
            await channel.room(server.requests)
        item = await channel.read()
        if item is None:
            log.info("end of input: the client is gone")
            break
        if isinstance(item, WireError):
            log.warning("bad message (%s): %s", item.code, item.message)
            channel.send_error(item)
            continue
        if server is None:
            if item.get("method") == "exit":
                code = 1
                break
            server = running.server = _before_initialize(channel, item)
            pid = item.get("params", {}).get("processId") if server is not None else None
            if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
                running.watcher = asyncio.ensure_future(_watch_parent(pid, channel))
            continue
        server.protocol.receive(item)
        if server.protocol.exit_requested:
            break
    return code


def _before_initialize(channel: StdioChannel, message: dict[str, Any]) -> AgentServer | None:
    method = message.get("method")
    msg_id = message.get("id")
    if method != "initialize":
        if msg_id is not None and method is not None:
            channel.send_error(WireError(-32002, f"{method}: the server is not initialized; send 'initialize' "
                                                 "first", msg_id))
        return None
    if msg_id is None:
        return None
    problem = _initialize_problem(message.get("params"))
    if problem is not None:
        channel.send_error(WireError(-32602, problem, msg_id))
        return None
    channel.send({"jsonrpc": "2.0", "id": msg_id, "result": initialize_result(__version__)})
    from .handlers import create_server

    server = create_server(channel)
    server.protocol.initialize_from(message["params"])
    return server
