"""One MCP server: started with a deadline, listed, watched, called, restarted after a crash.

States: ``starting`` → ``ready``; ``failed`` (never became ready: bad command, no answer to ``initialize``
within the start timeout, an HTTP error), ``crashed`` (was ready, then its connection ended), ``stopped``.
A crashed server keeps its tools: the next call restarts it, after a backoff that doubles with each crash
in a row (1 s, 2 s, 4 s … 30 s). A call during a longer wait fails at once and says when to retry.

The SDK's ``Client`` is entered and left in ``run`` (one task per connection lifetime, in the manager's
task group); calls come from the turns' tasks.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio

from .spec import ServerSpec
from .stderr import StderrTail
from ..tools.base import ToolOutput

log = logging.getLogger("agentls.mcp")

State = Literal["starting", "ready", "failed", "crashed", "stopped"]
MAX_BACKOFF = 30.0
MAX_WAIT_FOR_RESTART = 5.0  # a call waits this long for a backoff to pass; longer, it fails at once
STABLE_AFTER = 60.0  # a server up this long before it crashes starts its backoff afresh
MAX_PAGES = 100


class Unavailable(Exception):
    """The server cannot take calls now; the message says why (and what to do)."""


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_error(exc: BaseException) -> str:
    exc = _leaf(exc)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        return f"the command was not found ({exc.filename or message})"
    if isinstance(exc, PermissionError):
        return f"the command could not be run ({message})"
    return f"{type(exc).__name__}: {message}" if type(exc).__name__ not in str(message) else str(message)


async def _first(*waits: Callable[[], Awaitable[Any]]) -> None:
    """Returns as soon as one of ``waits`` returns."""
    async with anyio.create_task_group() as tg:
        async def one(wait: Callable[[], Awaitable[Any]]) -> None:
            await wait()
            tg.cancel_scope.cancel()

        for wait in waits:
            tg.start_soon(one, wait)


class ServerConnection:
    def __init__(self, spec: ServerSpec, *, spawn: Callable[[ServerConnection], None],
                 changed: Callable[[ServerConnection, str], None], roots: tuple[str, ...] = ()) -> None:
        self.spec = spec
        self.roots = roots  # the session's workspace, for servers that ask (``roots/list``)
        self.state: State = "starting"
        self.tools: list[Any] = []
        self.prompts: list[Any] = []
        self.resources: list[Any] = []
        self.last_error: str | None = None
        self.starts = 0
        self.crashes = 0  # in a row
        self.noise = 0  # stdout lines that were not JSON-RPC
        self.server_name: str | None = None
        self._spawn = spawn
        self._changed = changed
        self._client: Any = None
        self._scope: anyio.CancelScope | None = None
        self._stop = anyio.Event()
        self._ready = anyio.Event()
        self._done = anyio.Event()
        self._done.set()
        self._tg: Any = None
        self._restart = anyio.Lock()
        self._ready_at = 0.0
        self._crashed_at = 0.0
        self._refreshing: set[str] = set()

    # ----- status ----------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.spec.name, "transport": self.spec.transport, "state": self.state,
                               "toolCount": len(self.tools), "promptCount": len(self.prompts),
                               "resourceCount": len(self.resources), "lastError": self.last_error,
                               "source": self.spec.source, "target": self.spec.describe(),
                               "restarts": max(0, self.starts - 1)}
        if self.noise:
            out["ignoredLines"] = self.noise
        return out

    def _set(self, state: State, error: str | None = None) -> None:
        self.state = state
        if error is not None:
            self.last_error = error
        self._changed(self, state)

    # ----- one connection lifetime -----------------------------------------------------------
    def prepare(self) -> None:
        """Fresh events for the next ``run`` (called by whoever schedules it, before it runs)."""
        self._ready = anyio.Event()
        self._done = anyio.Event()
        self._stop = anyio.Event()
        self.state = "starting"

    async def run(self) -> None:
        """Connect, list, serve until stopped or the connection ends. Never raises (cancellation aside)."""
        from mcp import Client
        from mcp_types import Implementation

        from .transport import open_transport
        from ..version import __version__

        spec = self.spec
        self.starts += 1
        closed = anyio.Event()
        stderr = StderrTail() if spec.transport == "stdio" else None
        failure: str | None = None
        try:
            async with anyio.create_task_group() as tg:
                if stderr is not None:
                    tg.start_soon(stderr.drain)
                with anyio.CancelScope(deadline=anyio.current_time() + spec.start_timeout) as scope:
                    self._scope = scope
                    client = Client(open_transport(spec, closed, stderr), mode="auto", cache=None,
                                    message_handler=self._on_message, list_roots_callback=self._roots,
                                    client_info=Implementation(name="agentls", version=__version__))
                    try:
                        async with client:
                            await self._list_all(client)
                            scope.deadline = math.inf
                            failure = await self._serve(client, closed)
                    except Exception as exc:
                        failure = "crashed" if self.state == "ready" else f"could not start: {describe_error(exc)}"
                    finally:
                        self._client = None
                if scope.cancelled_caught and not self._stop.is_set() and self.state == "starting":
                    failure = (f"did not finish starting (initialize and listing) within {spec.start_timeout:g} s; "
                               "it was stopped")
                if stderr is not None and failure is not None:
                    with anyio.move_on_after(1.0):
                        await stderr.done.wait()
                tg.cancel_scope.cancel()
        except Exception as exc:  # the transport's own teardown failed: report it, never raise
            failure = failure or f"failed: {describe_error(exc)}"
        finally:
            self._scope = None
            self._client = None
            self._finish(failure, stderr)

    async def _serve(self, client: Any, closed: anyio.Event) -> str | None:
        """Ready: take calls until stopped (None) or the connection ends ("crashed")."""
        info = client.server_info
        self.server_name = info.name if info is not None else None
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._listen, client)
            self._client = client
            self._ready_at = anyio.current_time()
            self._set("ready")
            self._ready.set()
            try:
                await _first(self._stop.wait, closed.wait)
            finally:
                self._client = None
                self._tg = None
                tg.cancel_scope.cancel()
        return None if self._stop.is_set() else "crashed"

    async def _listen(self, client: Any) -> None:
        """On a 2026-07-28 connection, list changes arrive through ``subscriptions/listen``; earlier
        connections send the notifications unasked (``_on_message``)."""
        from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        caps = client.server_capabilities
        wanted = {name: bool(cap is not None and cap.list_changed) for name, cap in
                  (("tools", caps.tools), ("prompts", caps.prompts), ("resources", caps.resources))}
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or not any(wanted.values()):
            return
        kinds = ((ToolsListChanged, "tools"), (PromptsListChanged, "prompts"), (ResourcesListChanged, "resources"))
        try:
            async with client.listen(tools_list_changed=wanted["tools"], prompts_list_changed=wanted["prompts"],
                                     resources_list_changed=wanted["resources"]) as subscription:
                async for event in subscription:
                    for cls, what in kinds:
                        if isinstance(event, cls):
                            self._schedule(what)
        except Exception as exc:
            log.info("MCP server %s: no list-change subscription (%s)", self.spec.name, describe_error(exc))

    def _schedule(self, what: str) -> None:
        if self._tg is not None and what not in self._refreshing:
            self._refreshing.add(what)
            self._tg.start_soon(self._refresh, what)

    def _finish(self, failure: str | None, stderr: StderrTail | None) -> None:
        tail = stderr.tail() if stderr is not None else ""
        if failure is None or self._stop.is_set():
            self.state = "stopped"
            self._changed(self, "stopped")
        elif failure == "crashed" or self.state == "ready":
            now = anyio.current_time()
            self.crashes = 1 if now - self._ready_at >= STABLE_AFTER else self.crashes + 1
            self._crashed_at = now
            message = "the server stopped unexpectedly (its connection ended)"
            self._set("crashed", message + (f"; its stderr ended with:\n{tail}" if tail else ""))
            log.warning("MCP server %s crashed%s", self.spec.name, f": {tail}" if tail else "")
        else:
            self._set("failed", failure + (f"; its stderr ended with:\n{tail}" if tail else ""))
            log.warning("MCP server %s %s", self.spec.name, self.last_error)
        self._ready.set()
        self._done.set()

    async def _roots(self, context: Any) -> Any:
        """The session's workspace as the server's root (filesystem-like servers confine themselves to it)."""
        from pathlib import Path

        from mcp_types import ListRootsResult, Root

        return ListRootsResult(roots=[Root(uri=Path(r).as_uri(), name=Path(r).name) for r in self.roots])  # type: ignore[arg-type]

    async def _list(self, client: Any, method: str, attr: str) -> list[Any]:
        items: list[Any] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page = await getattr(client, method)(cursor=cursor, cache_mode="refresh")
            items.extend(getattr(page, attr))
            cursor = page.next_cursor
            if not cursor:
                break
        return items

    async def _list_all(self, client: Any) -> None:
        caps = client.server_capabilities
        self.tools = await self._list(client, "list_tools", "tools") if caps.tools is not None else []
        self.prompts = await self._list(client, "list_prompts", "prompts") if caps.prompts is not None else []
        self.resources = await self._list(client, "list_resources", "resources") \
            if caps.resources is not None else []

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.noise += 1
            return
        method = getattr(message, "method", "")
        what = {"notifications/tools/list_changed": "tools", "notifications/prompts/list_changed": "prompts",
                "notifications/resources/list_changed": "resources"}.get(method)
        if what is not None:
            self._schedule(what)

    async def _refresh(self, what: str) -> None:
        """A list the server said has changed, fetched again; the new list replaces the old at once."""
        try:
            client = self._client
            if client is None:
                return
            method = {"tools": "list_tools", "prompts": "list_prompts", "resources": "list_resources"}[what]
            items = await self._list(client, method, what)
            setattr(self, what, items)
            self._changed(self, what)
        except Exception as exc:
            log.warning("MCP server %s: refreshing its %s failed: %s", self.spec.name, what, describe_error(exc))
        finally:
            self._refreshing.discard(what)

    def stop(self) -> None:
        self._stop.set()
        if self._scope is not None and self.state == "starting":
            self._scope.cancel()

    async def wait_done(self) -> None:
        await self._done.wait()

    # ----- calls -----------------------------------------------------------------------------
    async def client(self) -> Any:
        """The connected client, starting the server again after a crash (with the backoff)."""
        async with self._restart:
            if self.state == "crashed":
                wait = min(MAX_BACKOFF, 2.0 ** (self.crashes - 1)) - (anyio.current_time() - self._crashed_at)
                if wait > MAX_WAIT_FOR_RESTART:
                    raise Unavailable(f"the MCP server {self.spec.name!r} crashed {self.crashes} times in a row; it "
                                      f"is restarted on the next call after {wait:.0f} s ({self.last_error})")
                if wait > 0:
                    await anyio.sleep(wait)
                log.info("restarting MCP server %s", self.spec.name)
                self._spawn(self)
                self._changed(self, "starting")
            if self.state == "starting":
                with anyio.move_on_after(self.spec.start_timeout + 5):
                    await self._ready.wait()
        if self.state == "ready" and self._client is not None:
            return self._client
        raise Unavailable(f"the MCP server {self.spec.name!r} is {self.state}"
                          + (f": {self.last_error}" if self.last_error else ""))

    async def _explain_crash(self) -> str:
        with anyio.move_on_after(3.0):
            await self._done.wait()
        return (f"error: the MCP server {self.spec.name!r} stopped during the call, so it has no result. "
                f"It is restarted on the next call. {self.last_error or ''}").strip()

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> ToolOutput:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        from .results import tool_output
        from .stdio import LINE_TOO_LONG

        try:
            client = await self.client()
        except Unavailable as exc:
            return ToolOutput(f"error: {exc}", is_error=True)
        timeout = self.spec.call_timeout
        try:
            with anyio.move_on_after(timeout) as scope:
                result = await client.call_tool(tool, arguments)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                return ToolOutput(await self._explain_crash(), is_error=True)
            if exc.code == LINE_TOO_LONG:
                return ToolOutput(f"error: the MCP server {self.spec.name!r} answered {tool} with {exc.message}; "
                                  "the answer was thrown away (ask for less, or raise max_line_bytes for this "
                                  "server)", is_error=True)
            return ToolOutput(f"error: the MCP server {self.spec.name!r} answered with an error: {exc.message}",
                              is_error=True)
        except Exception as exc:
            if self.state != "ready":
                return ToolOutput(await self._explain_crash(), is_error=True)
            return ToolOutput(f"error: calling {tool} on the MCP server {self.spec.name!r} failed: "
                              f"{describe_error(exc)}", is_error=True)
        if scope.cancelled_caught:
            return ToolOutput(f"error: {tool} (MCP server {self.spec.name!r}) did not answer within {timeout:g} s; "
                              "the call was cancelled", is_error=True)
        return tool_output(result)

    async def read_resource(self, uri: str) -> ToolOutput:
        from .results import resource_output

        try:
            client = await self.client()
            with anyio.fail_after(self.spec.call_timeout):
                result = await client.read_resource(uri)
        except Unavailable as exc:
            return ToolOutput(f"error: {exc}", is_error=True)
        except TimeoutError:
            return ToolOutput(f"error: reading {uri} did not finish within {self.spec.call_timeout:g} s",
                              is_error=True)
        except Exception as exc:
            return ToolOutput(f"error: reading {uri} from the MCP server {self.spec.name!r} failed: "
                              f"{describe_error(exc)}", is_error=True)
        return resource_output(uri, result)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> Any:
        client = await self.client()
        with anyio.fail_after(self.spec.call_timeout):
            return await client.get_prompt(name, arguments)
