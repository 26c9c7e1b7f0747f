"""A minimal server-sent-events reader over an httpx streaming response."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx


async def drain(events: AsyncIterator[tuple[str, str]], limit: float = 0.5) -> None:
    """Read a finished stream to its end so the keep-alive connection can be reused (a body left unread
    makes httpx drop the connection: a new TCP, and TLS, handshake for every call)."""
    import anyio

    with anyio.move_on_after(limit):
        async for _ in events:
            pass


async def iter_sse(response: httpx.Response) -> AsyncIterator[tuple[str, str]]:
    """Yield ``(event, data)`` for each SSE event; ``event`` is "" when the stream names none."""
    buffer = b""
    event = ""
    data: list[str] = []
    async for chunk in response.aiter_bytes():
        buffer += chunk
        while True:
            nl = buffer.find(b"\n")
            if nl < 0:
                break
            line = buffer[:nl].rstrip(b"\r").decode("utf-8", "replace")
            buffer = buffer[nl + 1:]
            if not line:
                if data:
                    yield event, "\n".join(data)
                event, data = "", []
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data.append(value)
            elif name == "event":
                event = value
    if data:
        yield event, "\n".join(data)
