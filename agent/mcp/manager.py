"""The MCP servers of one session: started in the background, their tools kept in the session's registry.

``start()`` returns at once; the SDK is imported and every server started in a task of its own. Each
server that becomes ready adds its tools to the registry, so they join the next model call; a refreshed
list (``notifications/tools/list_changed``) replaces them between model calls. A server that fails is
reported (``changed`` listeners, the log, ``status()``) and the session goes on. ``aclose()`` stops every
server and waits for their processes to be gone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from . import naming
from .connection import ServerConnection
from .spec import ServerSpec
from .tools import make_tool, resource_tools
from ..tools.base import Tool
from ..tools.registry import ToolRegistry

log = logging.getLogger("agentls.mcp")

CLOSE_TIMEOUT = 10.0
Listener = Callable[[str, ServerConnection | None], None]


class _Quiet(logging.Filter):
    """The SDK logs a traceback for every stdout line that is not JSON-RPC: a few, then a count."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if "Failed to parse JSONRPC message" not in record.getMessage():
            return True
        self.seen += 1
        return self.seen <= 3


_quiet = _Quiet()
logging.getLogger("mcp.client.stdio").addFilter(_quiet)


def _import_sdk() -> None:
    import mcp.client.client
    import mcp.client.sse
    import mcp.client.stdio  # noqa: F401


class McpManager:
    def __init__(self, specs: Sequence[ServerSpec], registry: ToolRegistry, *, problems: Sequence[str] = (),
                 roots: Sequence[str] = ()) -> None:
        self.registry = registry
        self.problems = list(problems)
        self.connections = [ServerConnection(s, spawn=self._spawn, changed=self._changed, roots=tuple(roots))
                            for s in specs]
        self.listeners: list[Listener] = []
        self._names: dict[tuple[str, str], str] = {}  # (server, tool) -> the registered name
        self._registered: dict[str, tuple[int, Tool]] = {}  # name -> (id of what it was made from, the tool)
        self._tg: Any = None
        self._task: asyncio.Task[None] | None = None
        self._closing = anyio.Event()
        self._change = anyio.Event()  # set (and replaced) on every state change
        self.closed = False

    # ----- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Start every server in the background (no-op without servers, or when already started)."""
        if self._task is None and self.connections and not self.closed:
            self._task = asyncio.ensure_future(self._host())

    async def _host(self) -> None:
        try:
            await anyio.to_thread.run_sync(_import_sdk)  # ~1 s of imports, off the event loop
        except Exception as exc:
            for conn in self.connections:
                conn.state = "failed"
                conn.last_error = f"the MCP SDK could not be loaded: {exc}"
                self._changed(conn, "failed")
            return
        if self.closed:  # the session closed while the SDK was loading: nothing to start
            return
        async with anyio.create_task_group() as tg:
            self._tg = tg
            for conn in self.connections:
                conn.prepare()
                tg.start_soon(conn.run)
            await self._closing.wait()
            for conn in self.connections:
                conn.stop()
            with anyio.move_on_after(CLOSE_TIMEOUT):
                for conn in self.connections:
                    await conn.wait_done()
            tg.cancel_scope.cancel()
        self._tg = None

    def _spawn(self, conn: ServerConnection) -> None:
        if self._tg is not None and not self.closed:
            conn.prepare()
            self._tg.start_soon(conn.run)

    async def aclose(self) -> None:
        """Stop every server; idempotent."""
        if self.closed:
            return
        self.closed = True
        self._closing.set()
        task = self._task
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), CLOSE_TIMEOUT + 5)
            except (TimeoutError, Exception):
                task.cancel()
                log.exception("stopping the MCP servers took too long")
        self._unregister_all()

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Until no server is still starting (``agentls run`` waits for this before its one turn)."""
        limit = timeout if timeout is not None else max((c.spec.start_timeout for c in self.connections), default=0)
        with anyio.move_on_after(limit + 2):
            while True:
                change = self._change
                if self.closed or not any(c.state == "starting" for c in self.connections):
                    return
                await change.wait()

    # ----- what the faces read ---------------------------------------------------------------
    def connection(self, name: str) -> ServerConnection | None:
        return next((c for c in self.connections if c.spec.name == name), None)

    def status(self) -> list[dict[str, Any]]:
        out = []
        for conn in self.connections:
            item = conn.status()
            item["tools"] = [self._names.get((conn.spec.name, t.name), t.name) for t in conn.tools]
            out.append(item)
        return out

    def _changed(self, conn: ServerConnection, what: str) -> None:
        change, self._change = self._change, anyio.Event()
        change.set()
        if what in ("ready", "tools", "crashed", "failed", "stopped", "starting"):
            self._sync_tools()
        for listener in list(self.listeners):
            try:
                listener(what, conn)
            except Exception:
                log.exception("an MCP status listener failed")

    # ----- the registry ----------------------------------------------------------------------
    def _sync_tools(self) -> None:
        """The registry holds the tools of every ready (or crashed: restarted on use) server."""
        if self.closed:
            return
        wanted: dict[str, tuple[int, Tool]] = {}
        taken = {n for n in self.registry.names if n not in self._registered}
        for conn in self.connections:
            if conn.state not in ("ready", "crashed", "starting") or (conn.state == "starting" and conn.starts <= 1):
                continue
            for mcp_tool in conn.tools:
                key = (conn.spec.name, mcp_tool.name)
                name = self._names.get(key)
                if name is None or name in taken:
                    name = naming.tool_name(*key, taken=taken | set(self._names.values()) - {name})
                    self._names[key] = name
                taken.add(name)
                known = self._registered.get(name)
                wanted[name] = known if known is not None and known[0] == id(mcp_tool) else \
                    (id(mcp_tool), make_tool(conn, mcp_tool, name))
        if any(c.resources for c in self.connections if c.state in ("ready", "crashed")):
            for tool in resource_tools(self):
                if tool.name not in taken:
                    wanted[tool.name] = self._registered.get(tool.name) or (0, tool)
        for name in set(self._registered) - set(wanted):
            self.registry.remove(name)
        for name, entry in wanted.items():
            if self._registered.get(name) is not entry:
                self.registry.add(entry[1])
        self._registered = wanted

    def _unregister_all(self) -> None:
        for name in self._registered:
            self.registry.remove(name)
        self._registered = {}
