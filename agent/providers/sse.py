"""Server-sent events over an httpx streaming response: the one decode loop of the three streaming
providers (OpenAI chat, Anthropic messages, OpenAI Responses). See docs/providers.md."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Collection
from typing import Any

import anyio
import httpx

from .errors import ProviderError
from .http import stream_error

DONE = "[DONE]"  # the kind of OpenAI's ``data: [DONE]`` (an empty object comes with it)


async def drain(chunks: AsyncIterator[bytes], limit: float = 0.5) -> None:
    """Read a finished stream to its end so the keep-alive connection can be reused (a body left unread
    makes httpx drop the connection: a new TCP, and TLS, handshake for every call)."""
    with anyio.move_on_after(limit):
        async for _ in chunks:
            pass


def _decode(event: str, data: str, model: str) -> tuple[str, dict[str, Any]]:
    try:
        parsed = json.loads(data)
    except ValueError as exc:
        if data.strip() == DONE:
            return DONE, {}
        raise ProviderError("format_error", f"the model server sent a malformed stream event: {data[:120]!r}",
                            model=model) from exc
    if not isinstance(parsed, dict):
        raise ProviderError("format_error", "the model server sent a stream event that is not an object", model=model)
    kind = str(parsed.get("type") or event)
    if event == "error" or kind == "error" or parsed.get("error"):
        raise stream_error(data, model)
    return kind, parsed


async def json_events(response: httpx.Response, model: str,
                      last: Collection[str]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Each SSE event's JSON object with its kind (its ``type``, else the SSE event name; ``DONE`` for
    OpenAI's ``data: [DONE]``). An event that is not a JSON object is a ``format_error``; an error event
    (named ``error``, or with an ``error`` member) raises the provider error it carries. Once an event of a kind
    in ``last`` has been handled by the consumer, the rest of the body is drained unread and the
    iteration ends. One generator over the bytes: no layer between the socket and the provider."""
    chunks = response.aiter_bytes()
    buffer = b""
    event = ""
    data: list[str] = []
    async for chunk in chunks:
        *lines, buffer = (buffer + chunk).split(b"\n")  # one split per chunk, not one slice per line
        for raw in lines:
            line = raw.rstrip(b"\r").decode("utf-8", "replace")
            if not line:
                if data:
                    kind, obj = _decode(event, data[0] if len(data) == 1 else "\n".join(data), model)
                    yield kind, obj
                    if kind in last:
                        await drain(chunks)
                        return
                event, data = "", []
            elif not line.startswith(":"):
                name, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if name == "data":
                    data.append(value)
                elif name == "event":
                    event = value
    if data:
        yield _decode(event, "\n".join(data), model)
