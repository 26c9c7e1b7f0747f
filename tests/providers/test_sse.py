"""The one SSE decode loop (agent/providers/sse.py) under the OpenAI and Anthropic providers: hostile streams end
as classified errors, and what follows the last event is drained unread (the keep-alive connection is reused)."""

from __future__ import annotations

import json

import httpx
import pytest

from agentls.agent.providers.anthropic import AnthropicProvider
from agentls.agent.providers.base import ProviderRequest
from agentls.agent.providers.errors import ProviderError
from agentls.agent.providers.openai import OpenAIProvider
from agentls.agent.scripted import ScriptedServer
from agentls.agent.scripted.replies import Reply

REQUEST = ProviderRequest(model="m", system="", messages=[{"role": "user", "content": "go"}], max_tokens=100)
CHUNK = json.dumps({"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]})
DONE_CHUNK = json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
ANTHROPIC = [
    {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                                          "content": [], "usage": {"input_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
]


def sse(*events: str, names: tuple[str, ...] = ()) -> str:
    named = list(names) + [""] * (len(events) - len(names))
    return "".join((f"event: {n}\n" if n else "") + f"data: {e}\n\n" for e, n in zip(events, named, strict=True))


async def openai(srv: ScriptedServer, body: str) -> str:
    srv.push(Reply(recorded=body))
    async with httpx.AsyncClient() as client:
        r = await OpenAIProvider(base_url=srv.openai_url, api_key="k", client=client).complete(REQUEST)
    return str(r.message.get("content"))


async def anthropic(srv: ScriptedServer, body: str) -> str:
    srv.push(Reply(recorded=body))
    async with httpx.AsyncClient() as client:
        r = await AnthropicProvider(base_url=srv.anthropic_url, api_key="k", client=client).complete(REQUEST)
    return str(r.message.get("content"))


def anthropic_events(*extra: str) -> list[str]:
    return [json.dumps(e) for e in ANTHROPIC] + list(extra)


@pytest.mark.parametrize("bad", ["[1, 2]", '"text"', "42", "null"])
async def test_an_event_that_is_not_an_object_is_a_format_error_on_both_wires(srv: ScriptedServer, bad: str) -> None:
    with pytest.raises(ProviderError) as chat:
        await openai(srv, sse(CHUNK, bad, DONE_CHUNK, "[DONE]"))
    with pytest.raises(ProviderError) as messages:
        await anthropic(srv, sse(*anthropic_events(bad, json.dumps({"type": "message_stop"}))))
    for err in (chat.value, messages.value):
        assert err.category == "format_error" and "not an object" in str(err)


async def test_malformed_json_names_the_event(srv: ScriptedServer) -> None:
    with pytest.raises(ProviderError) as info:
        await openai(srv, sse(CHUNK, '{"choices": [', "[DONE]"))
    assert info.value.category == "format_error" and "malformed stream event" in str(info.value)
    assert '{"choices": [' in str(info.value)


async def test_an_error_event_inside_a_200_stream_is_classified(srv: ScriptedServer) -> None:
    overloaded = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
    with pytest.raises(ProviderError) as messages:
        await anthropic(srv, sse(*anthropic_events(overloaded)))
    assert messages.value.category == "overloaded"
    with pytest.raises(ProviderError) as chat:  # OpenAI-compatible servers name the event, or put "error" in it
        await openai(srv, sse(CHUNK, json.dumps({"error": {"message": "rate limited", "code": 429}})))
    assert chat.value.category != "format_error"


async def test_what_follows_the_last_event_is_drained_unread(srv: ScriptedServer) -> None:
    """Garbage after ``[DONE]`` or ``message_stop`` is never parsed: the answer stands."""
    assert await openai(srv, sse(CHUNK, DONE_CHUNK, "[DONE]", "not json at all", "[1]")) == "hi"
    stop = json.dumps({"type": "message_stop"})
    assert await anthropic(srv, sse(*anthropic_events(stop, "{broken", '"x"'))) == "hi"


async def test_a_stream_cut_before_its_end_is_a_server_error(srv: ScriptedServer) -> None:
    with pytest.raises(ProviderError) as chat:
        await openai(srv, sse(CHUNK))
    with pytest.raises(ProviderError) as messages:
        await anthropic(srv, sse(*anthropic_events()))
    assert chat.value.category == messages.value.category == "server_error"
