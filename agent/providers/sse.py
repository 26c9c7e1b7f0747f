"""Server-sent events over an httpx streaming response: the one decode loop of the three streaming
providers (OpenAI chat, Anthropic messages, OpenAI Responses). See docs/providers.md."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx

from .errors import ProviderError
from .http import stream_error

DONE = "[DONE]"  # the kind of OpenAI's ``data: [DONE]`` (an empty object comes with it)


async def drain(events: AsyncIterator[tuple[str, str]], limit: float = 0.5) -> None:
    """Read a finished stream to its end so the keep-alive connection can be reused (a body left unread
    makes httpx drop the connection: a new TCP, and TLS, handshake for every call)."""
    with anyio.move_on_after(limit):
        async for _ in events:
            pass


async def json_events(response: httpx.Response, model: str,
                      last: Callable[[str], bool]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Each event's JSON object with its kind (its ``type``, else the SSE event name). An event that is not
    a JSON object is a ``format_error``; an error event (named ``error``, or with an ``error`` member) raises
    the provider error it carries. Once ``last(kind)`` is true for an event the consumer has handled, the
    rest of the body is drained and the iteration ends."""
    events = iter_sse(response)
    async for event, data in events:
        if data.strip() == DONE:
            kind, obj = DONE, {}
        else:
            try:
                parsed = json.loads(data)
            except ValueError as exc:
                raise ProviderError("format_error", f"the model server sent a malformed stream event: {data[:120]!r}",
                                    model=model) from exc
            if not isinstance(parsed, dict):
                raise ProviderError("format_error", "the model server sent a stream event that is not an object",
                                    model=model)
            obj, kind = parsed, str(parsed.get("type") or event)
            if event == "error" or kind == "error" or parsed.get("error"):
                raise stream_error(data, model)
        yield kind, obj
        if last(kind):
            await drain(events)
            return


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
