"""A minimal server-sent-events reader over an httpx streaming response."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx


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
