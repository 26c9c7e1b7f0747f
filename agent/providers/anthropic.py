"""Native Anthropic Messages, with prompt-cache breakpoints on the system prompt and recent messages."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any

import httpx

from agentls.agent.providers.base import ProviderRequest, ProviderResponse, StreamSink, ToolSchema
from agentls.agent.providers.errors import ProviderError
from agentls.agent.providers.http import post, stream_error
from agentls.agent.providers.sse import drain, iter_sse
from agentls.agent.types import Message, ToolCall, Usage

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
_EPHEMERAL = {"type": "ephemeral"}
_STOP = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "stop_sequence": "stop",
         "refusal": "content_filter", "pause_turn": "stop"}
_DATA_URL = re.compile(r"^data:(?P<mime>[\w/+.-]+);base64,(?P<data>.*)$", re.DOTALL)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and part.get("text"):
            out.append({"type": "text", "text": str(part["text"])})
        elif part.get("type") == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            m = _DATA_URL.match(url)
            if m:
                out.append({"type": "image", "source": {"type": "base64", "media_type": m["mime"], "data": m["data"]}})
            elif url:
                out.append({"type": "image", "source": {"type": "url", "url": url}})
    return out


def _tool_input(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {"_raw_arguments": arguments}
    return value if isinstance(value, dict) else {"value": value}


def to_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Internal transcript to Anthropic messages: tool results and a following steer share one user turn."""
    out: list[dict[str, Any]] = []

    def user_blocks() -> list[dict[str, Any]]:
        if out and out[-1]["role"] == "user":
            blocks: list[dict[str, Any]] = out[-1]["content"]
            return blocks
        out.append({"role": "user", "content": []})
        fresh: list[dict[str, Any]] = out[-1]["content"]
        return fresh

    for msg in messages:
        role = msg.get("role")
        if role == "user":
            user_blocks().extend(_blocks(msg.get("content")) or [{"type": "text", "text": "(empty)"}])
        elif role == "tool":
            text = msg.get("content")
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": msg.get("tool_call_id", ""),
                                     "content": text if isinstance(text, str) and text else "(no output)"}
            if (msg.get("meta") or {}).get("error"):
                block["is_error"] = True
            user_blocks().append(block)
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            if msg.get("reasoning") and msg.get("reasoning_signature"):
                blocks.append({"type": "thinking", "thinking": msg["reasoning"],
                               "signature": msg["reasoning_signature"]})
            blocks.extend(_blocks(msg.get("content")))
            for call in msg.get("tool_calls") or []:
                blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                               "input": _tool_input(call["function"]["arguments"])})
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(empty)"}]})
    return out


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
                 extra_headers: dict[str, str] | None = None) -> None:
        base = base_url.rstrip("/")
        self._url = (base if base.endswith("/v1") else base + "/v1") + "/messages"
        self._client = client
        self._headers = {"content-type": "application/json", "anthropic-version": API_VERSION,
                         **(extra_headers or {})}
        if api_key:
            self._headers["x-api-key"] = api_key
        self._secrets = (api_key,) if api_key else ()

    def _body(self, request: ProviderRequest) -> dict[str, Any]:
        wire = to_wire(request.messages)
        _mark_cache(wire)
        body: dict[str, Any] = {"model": request.model, "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
                                "messages": wire, "stream": request.stream}
        if request.system:
            body["system"] = [{"type": "text", "text": request.system, "cache_control": _EPHEMERAL}]
        if request.tools and request.tool_choice != "none":
            body["tools"] = _tools(request.tools)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    async def aclose(self) -> None:
        """The HTTP client belongs to the agent, which closes it."""

    async def complete(self, request: ProviderRequest, sink: StreamSink | None = None) -> ProviderResponse:
        body = json.dumps(self._body(request), ensure_ascii=False, separators=(",", ":")).encode()
        resp = await post(self._client, self._url, body, self._headers, model=request.model, purpose=request.purpose,
                          stream=request.stream, secrets=self._secrets,
                          read_stream=lambda r: self._read_stream(r, request, sink))
        if isinstance(resp, ProviderResponse):
            return resp
        try:
            data = resp.json()
            blocks = list(data["content"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ProviderError("format_error", f"the model server sent a response that is not a message: "
                                f"{resp.text[:200]!r}", model=request.model) from exc
        return _response(request, blocks, data.get("stop_reason"), _usage(data.get("usage") or {}), data)

    async def _read_stream(self, resp: httpx.Response, request: ProviderRequest,
                           sink: StreamSink | None) -> ProviderResponse:
        blocks: dict[int, dict[str, Any]] = {}
        usage: dict[str, Any] = {}
        stop: str | None = None
        finished = False
        stream = iter_sse(resp)
        async for event, data in stream:
            try:
                ev = json.loads(data)
            except ValueError as exc:
                raise ProviderError("format_error", f"the model server sent a malformed stream event: {data[:120]!r}",
                                    model=request.model) from exc
            kind = ev.get("type", event) if isinstance(ev, dict) else None
            if kind == "error":
                raise stream_error(data, request.model)
            if kind == "message_start":
                usage.update((ev.get("message") or {}).get("usage") or {})
            elif kind == "content_block_start":
                block = dict(ev.get("content_block") or {})
                if block.get("type") == "tool_use":
                    block["_json"] = []
                blocks[int(ev.get("index", len(blocks)))] = block
            elif kind == "content_block_delta":
                block = blocks.setdefault(int(ev.get("index", 0)), {"type": "text", "text": ""})
                delta = ev.get("delta") or {}
                dtype = delta.get("type")
                if dtype == "text_delta":
                    block["text"] = block.get("text", "") + delta.get("text", "")
                    if sink and sink.on_text and delta.get("text"):
                        await sink.on_text(delta["text"])
                elif dtype == "thinking_delta":
                    block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
                    if sink and sink.on_reasoning and delta.get("thinking"):
                        await sink.on_reasoning(delta["thinking"])
                elif dtype == "signature_delta":
                    block["signature"] = block.get("signature", "") + delta.get("signature", "")
                elif dtype == "input_json_delta":
                    block.setdefault("_json", []).append(delta.get("partial_json", ""))
            elif kind == "message_delta":
                stop = (ev.get("delta") or {}).get("stop_reason") or stop
                usage.update(ev.get("usage") or {})
            elif kind == "message_stop":
                finished = True
                await drain(stream)
                break
        if not finished:
            raise ProviderError("server_error", "the response stream ended before the model finished",
                                model=request.model)
        ordered = []
        for _, block in sorted(blocks.items()):
            if block.get("type") == "tool_use":
                raw = "".join(block.pop("_json", []))
                block["input"] = raw  # kept as text: it may be cut off by max_tokens
            ordered.append(block)
        return _response(request, ordered, stop, _usage(usage), {})


def _response(request: ProviderRequest, blocks: list[dict[str, Any]], stop: str | None, usage: Usage,
              raw: dict[str, Any]) -> ProviderResponse:
    text: list[str] = []
    thinking: list[str] = []
    signature = ""
    calls: list[ToolCall] = []
    for block in blocks:
        btype = block.get("type")
        if btype == "text":
            text.append(str(block.get("text", "")))
        elif btype == "thinking":
            thinking.append(str(block.get("thinking", "")))
            signature = str(block.get("signature", "")) or signature
        elif btype == "redacted_thinking":
            continue
        elif btype == "tool_use":
            arg = block.get("input")
            args = arg if isinstance(arg, str) else json.dumps(arg if arg is not None else {})
            calls.append({"id": str(block.get("id") or f"toolu_{len(calls)}"), "type": "function",
                          "function": {"name": str(block.get("name", "")), "arguments": args or "{}"}})
    message: Message = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = calls
    if thinking:
        message["reasoning"] = "".join(thinking)
        if signature:
            message["reasoning_signature"] = signature
    finish = _STOP.get(stop or "end_turn", "stop")
    return ProviderResponse(message=message, finish_reason=finish, usage=usage, model=request.model, raw=raw)


def image_part(data: bytes, mime: str) -> dict[str, Any]:
    """An OpenAI-style image part (the internal form) from raw bytes."""
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode()}"}}
