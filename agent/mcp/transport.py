"""The transports for a ``ServerSpec`` (stdio: our own, agent/mcp/stdio.py; HTTP and SSE: the SDK's), watched: ``closed`` is set the moment the server's side of
the connection ends (a stdio server that exits, an HTTP stream that breaks), so a crash is noticed even
when no call is waiting."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio

from .spec import ServerSpec
from .stderr import StderrTail


class WatchedRead:
    """The transport's read stream, setting ``closed`` when it ends (everything else passes through)."""

    def __init__(self, inner: Any, closed: anyio.Event) -> None:
        self._inner = inner
        self._closed = closed

    def __getattr__(self, name: str) -> Any:  # last_context and friends
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._closed.set()
            raise

    def __aiter__(self) -> WatchedRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> WatchedRead:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@asynccontextmanager
async def open_transport(spec: ServerSpec, closed: anyio.Event, stderr: StderrTail | None
                         ) -> AsyncIterator[tuple[Any, Any]]:
    """``(read, write)`` streams to the server. A stdio server's stderr goes to ``stderr``."""
    async with AsyncExitStack() as stack:
        if spec.transport == "stdio":
            from .stdio import stdio_transport

            assert spec.command is not None and stderr is not None and stderr.child_end is not None
            try:
                read, write = await stack.enter_async_context(
                    stdio_transport(spec, stderr.child_end, spec.max_line_bytes))
            finally:
                stderr.close_child_end()
        else:
            from mcp.shared._httpx_utils import create_mcp_http_client

            assert spec.url is not None
            headers = dict(spec.headers) or None
            if spec.transport == "http":
                from mcp.client.streamable_http import streamable_http_client

                client = await stack.enter_async_context(create_mcp_http_client(headers=headers))
                read, write = await stack.enter_async_context(streamable_http_client(spec.url, http_client=client))
            else:
                from mcp.client.sse import sse_client

                read, write = await stack.enter_async_context(sse_client(spec.url, headers=headers))
        try:
            yield WatchedRead(read, closed), write
        finally:
            closed.set()
