"""Native Anthropic Messages, with prompt-cache breakpoints and extended thinking kept across tool calls."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx

from .anthropic_blocks import (
    ends_mid_tool_loop_without_thinking,
    image_part,
    response_message,
    to_wire,
)
from .base import ProviderRequest, ProviderResponse, StreamSink, ToolSchema
from .errors import ProviderError
from .http import post
from .sse import json_events
from ..types import Usage

__all__ = ["AnthropicProvider", "image_part", "to_wire"]

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
_EPHEMERAL = {"type": "ephemeral"}
_STOP = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "stop_sequence": "stop",
         "refusal": "content_filter", "pause_turn": "stop", "model_context_window_exceeded": "length"}


def _mark_cache(wire: list[dict[str, Any]]) -> None:
    """Breakpoints on the last two user turns (the system prompt has the third; the API allows four)."""
    marked = 0
    for msg in reversed(wire):
        if msg["role"] == "user" and msg["content"] and marked < 2:
            last = dict(msg["content"][-1])
            last["cache_control"] = _EPHEMERAL
            msg["content"] = [*msg["content"][:-1], last]
            marked += 1


def _tools(tools: Sequence[ToolSchema]) -> list[dict[str, Any]]:
    out = []
    for t in tools:
        fn = t.get("function", {})
        out.append({"name": fn.get("name"), "description": fn.get("description", ""),
                    "input_schema": fn.get("parameters") or {"type": "object", "properties": {}}})
    return out


def _usage(raw: dict[str, Any]) -> Usage:
    read = int(raw.get("cache_read_input_tokens") or 0)
    created = int(raw.get("cache_creation_input_tokens") or 0)
    return {"prompt_tokens": int(raw.get("input_tokens") or 0) + read + created,
            "completion_tokens": int(raw.get("output_tokens") or 0), "cached_tokens": read}


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, *, base_url: str, api_key: str | None, client: httpx.AsyncClient,
                 extra_headers: dict[str, str] | None = None, thinking_budget: int | None = None) -> None:
        base = base_url.rstrip("/")
        self._url = (base if base.endswith("/v1") else base + "/v1") + "/messages"
        self._client = client
        self._headers = {"content-type": "application/json", "anthropic-version": API_VERSION,
                         **(extra_headers or {})}
        if api_key:
            self._headers["x-api-key"] = api_key
        self._secrets = (api_key,) if api_key else ()
        self.thinking_budget = thinking_budget

    def _body(self, request: ProviderRequest) -> tuple[dict[str, Any], dict[str, str]]:
        wire = to_wire(request.messages)
        _mark_cache(wire)
        body: dict[str, Any] = {"model": request.model, "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
                                "messages": wire, "stream": request.stream}
        headers = self._headers
        if request.system:
            body["system"] = [{"type": "text", "text": request.system, "cache_control": _EPHEMERAL}]
        tools = bool(request.tools) and request.tool_choice not in ("none", "text")
        if tools:
            body["tools"] = _tools(request.tools)
        budget = self.thinking_budget
        if budget and not ends_mid_tool_loop_without_thinking(wire):
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            if body["max_tokens"] <= budget:  # the API wants room for the answer beyond the thinking
                body["max_tokens"] = budget + DEFAULT_MAX_TOKENS
            if tools:  # thinking between tool calls, not only before the first
                headers = {**headers, "anthropic-beta": INTERLEAVED_THINKING}
        elif request.temperature is not None:  # with thinking the API takes no temperature but 1
            body["temperature"] = request.temperature
        return body, headers

    async def aclose(self) -> None:
        """The HTTP client belongs to the agent, which closes it."""

    async def complete(self, request: ProviderRequest, sink: StreamSink | None = None) -> ProviderResponse:
        body, headers = self._body(request)
        raw_body = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        return await post(self._client, self._url, raw_body, headers, model=request.model, purpose=request.purpose,
                          stream=request.stream, secrets=self._secrets,
                          read_stream=lambda r: self._read_stream(r, request, sink),
                          read_whole=lambda data: _whole(request, data), shape="a message")

    async def _read_stream(self, resp: httpx.Response, request: ProviderRequest,
                           sink: StreamSink | None) -> ProviderResponse:
        blocks: dict[int, dict[str, Any]] = {}
        usage: dict[str, Any] = {}
        stop: str | None = None
        finished = False
        on_text = sink.on_text if sink else None
        on_reasoning = sink.on_reasoning if sink else None

        async def show(block: dict[str, Any]) -> None:  # a block that arrives with its text already in it
            if block.get("type") == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"]:
                if on_reasoning:
                    await on_reasoning(block["thinking"])
            elif block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"] and on_text:
                await on_text(block["text"])

        async for kind, ev in json_events(resp, request.model, last=("message_stop",)):
            if kind == "message_start":
                message = _obj(ev.get("message"))
                blocks = {}  # a restarted message replaces what came before it
                usage.update(message.get("usage") or {})
                for i, block in enumerate(message.get("content") or ()):
                    if isinstance(block, dict):
                        blocks[i] = _started(block)
                        await show(blocks[i])
            elif kind == "content_block_start":
                block = _started(_obj(ev.get("content_block")))
                blocks[_index(ev, len(blocks))] = block
                await show(block)
            elif kind == "content_block_delta":
                delta = _obj(ev.get("delta"))
                index = _index(ev, 0)
                block = blocks.get(index) or blocks.setdefault(index, _started({"type": _BLOCK_OF.get(
                    str(delta.get("type")), "text")}))
                piece = _apply(block, delta)
                if piece:
                    kind_of = "reasoning" if delta.get("type") == "thinking_delta" else "text"
                    if kind_of == "reasoning" and on_reasoning:
                        await on_reasoning(piece)
                    elif kind_of == "text" and on_text:
                        await on_text(piece)
            elif kind == "message_delta":
                delta = _obj(ev.get("delta"))
                stop = delta.get("stop_reason") or stop
                usage.update(ev.get("usage") or {})
            elif kind == "message_stop":
                finished = True
        if not finished:
            raise ProviderError("server_error", "the response stream ended before the model finished",
                                model=request.model)
        ordered = []
        for _, block in sorted(blocks.items()):
            if block.get("type") == "tool_use":
                raw = "".join(block.pop("_json", []))
                if raw or not isinstance(block.get("input"), dict) or not block["input"]:
                    block["input"] = raw  # kept as text: it may be cut off by max_tokens
            ordered.append(block)
        return _response(request, ordered, stop, _usage(usage), {})


_BLOCK_OF = {"thinking_delta": "thinking", "signature_delta": "thinking", "input_json_delta": "tool_use"}


def _whole(request: ProviderRequest, data: Any) -> ProviderResponse:
    blocks = [b for b in data["content"] if isinstance(b, dict)]
    return _response(request, blocks, data.get("stop_reason"), _usage(data.get("usage") or {}), data)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _index(ev: dict[str, Any], default: int) -> int:
    index = ev.get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else default


def _started(block: dict[str, Any]) -> dict[str, Any]:
    block = dict(block)
    if block.get("type") == "tool_use":
        block["_json"] = []
    return block


def _apply(block: dict[str, Any], delta: dict[str, Any]) -> str:
    """Fold one delta into its block; the text to show, if any."""
    dtype = delta.get("type")
    if dtype == "text_delta" and isinstance(delta.get("text"), str):
        block["text"] = str(block.get("text") or "") + delta["text"]
        return str(delta["text"])
    if dtype == "thinking_delta" and isinstance(delta.get("thinking"), str):
        block["thinking"] = str(block.get("thinking") or "") + delta["thinking"]
        return str(delta["thinking"])
    if dtype == "signature_delta" and isinstance(delta.get("signature"), str):
        block["signature"] = str(block.get("signature") or "") + delta["signature"]
    elif dtype == "input_json_delta" and isinstance(delta.get("partial_json"), str):
        block.setdefault("_json", []).append(delta["partial_json"])
    return ""


def _response(request: ProviderRequest, blocks: list[dict[str, Any]], stop: str | None, usage: Usage,
              raw: dict[str, Any]) -> ProviderResponse:
    message, _ = response_message(blocks)
    finish = _STOP.get(stop or "end_turn", "stop")
    return ProviderResponse(message=message, finish_reason=finish, usage=usage, model=request.model, raw=raw)
