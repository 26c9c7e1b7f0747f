"""The OpenAI Responses API (``provider = "openai-responses"``), stateless: ``store: false``.

Nothing is kept on the server, so each request carries the whole conversation as input items. A
reasoning model's reasoning survives a tool call only as its encrypted reasoning items, asked for with
``include: ["reasoning.encrypted_content"]`` and kept in the assistant message's ``provider_data``
(``{"wire": "openai-responses", "items": [...]}``) with markers for its text and function calls, then
sent back verbatim, in place. Function calls and messages are sent without their ids: with
``store: false`` the server has no item to find under them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx

from .base import ProviderRequest, ProviderResponse, StreamSink, ToolSchema
from .errors import ProviderError
from .http import post, stream_error
from .layout import Kinds, in_stored_order
from .openai import _clean_call
from .sse import json_events
from ..types import Message, ToolCall, Usage, text_of

FINAL = ("response.completed", "response.incomplete")  # the events that end a response stream
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _user_content(content: Any) -> Any:
    if isinstance(content, str) or content is None:
        return content or "(empty)"
    parts: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text":
            parts.append({"type": "input_text", "text": str(part.get("text") or "")})
        elif isinstance(part, dict) and part.get("type") == "image_url":
            parts.append({"type": "input_image", "image_url": str((part.get("image_url") or {}).get("url", ""))})
    return parts or "(empty)"


def _function_call(call: ToolCall) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call["id"], "name": call["function"]["name"],
            "arguments": call["function"]["arguments"]}


def _reasoning_item(entry: dict[str, Any]) -> dict[str, Any] | None:
    if entry.get("type") != "reasoning" or not isinstance(entry.get("encrypted_content"), str):
        return None  # without its encrypted content a reasoning item means nothing to a stateless server
    item = {"type": "reasoning", "encrypted_content": entry["encrypted_content"],
            "summary": entry.get("summary") if isinstance(entry.get("summary"), list) else []}
    if isinstance(entry.get("id"), str):
        item["id"] = entry["id"]
    return item


def assistant_items(msg: Message) -> list[dict[str, Any]]:
    """Input items for an assistant message: reasoning items in place, its text, its function calls."""
    text = text_of(msg)
    message = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
    calls = list(msg.get("tool_calls") or [])
    data = msg.get("provider_data")
    layout = data.get("items") if isinstance(data, dict) and data.get("wire") == "openai-responses" else []
    return in_stored_order(layout, calls, [message] if text else [], _KINDS)


_KINDS = Kinds(("reasoning",), "message", "function_call", "call_id", _reasoning_item, _function_call)


def to_input(messages: Sequence[Message]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for msg in messages:
        role = msg.get("role")
        if role == "user":
            items.append({"role": "user", "content": _user_content(msg.get("content"))})
        elif role == "assistant":
            items.extend(assistant_items(msg))
        elif role == "tool":
            content = msg.get("content")
            items.append({"type": "function_call_output", "call_id": msg.get("tool_call_id", ""),
                          "output": content if isinstance(content, str) else text_of(msg)})
    return items


def _tools(tools: Sequence[ToolSchema]) -> list[dict[str, Any]]:
    out = []
    for t in tools:
        fn = t.get("function", {})
        out.append({"type": "function", "name": fn.get("name"), "description": fn.get("description", ""),
                    "parameters": fn.get("parameters") or {"type": "object", "properties": {}}})
    return out


def _usage(raw: Any) -> Usage:
    raw = raw if isinstance(raw, dict) else {}
    details = raw.get("input_tokens_details") if isinstance(raw.get("input_tokens_details"), dict) else {}
    return {"prompt_tokens": int(raw.get("input_tokens") or 0), "completion_tokens": int(raw.get("output_tokens") or 0),
            "cached_tokens": int(details.get("cached_tokens") or 0)}


class _Output:
    """Output items as they arrive, by ``output_index``; what to show comes back from ``event``."""

    def __init__(self) -> None:
        self.items: dict[int, dict[str, Any]] = {}
        self.args: dict[int, list[str]] = {}
        self.text: dict[int, list[str]] = {}
        self.summary: list[str] = []
        self.response: dict[str, Any] | None = None

    def _index(self, ev: dict[str, Any]) -> int:
        index = ev.get("output_index")
        return index if isinstance(index, int) else len(self.items)

    def event(self, ev: dict[str, Any]) -> tuple[str, str] | None:
        kind = ev.get("type")
        index = self._index(ev)
        if kind in ("response.output_item.added", "response.output_item.done") and isinstance(ev.get("item"), dict):
            self.items[index] = {**self.items.get(index, {}), **ev["item"]}
        elif kind == "response.output_text.delta" and isinstance(ev.get("delta"), str):
            self.text.setdefault(index, []).append(ev["delta"])
            return "text", ev["delta"]
        elif kind == "response.refusal.delta" and isinstance(ev.get("delta"), str):
            self.text.setdefault(index, []).append(ev["delta"])
            return "text", ev["delta"]
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta") \
                and isinstance(ev.get("delta"), str):
            self.summary.append(ev["delta"])
            return "reasoning", ev["delta"]
        elif kind == "response.reasoning_summary_part.added" and self.summary:
            self.summary.append("\n\n")
            return "reasoning", "\n\n"
        elif kind == "response.function_call_arguments.delta" and isinstance(ev.get("delta"), str):
            self.args.setdefault(index, []).append(ev["delta"])
        elif kind in ("response.completed", "response.incomplete") and isinstance(ev.get("response"), dict):
            self.response = ev["response"]
        return None

    def message(self) -> tuple[Message, str]:
        """The assistant message and the finish reason."""
        response = self.response or {}
        output = response.get("output")
        final: list[Any] = output if isinstance(output, list) else []
        items = dict(self.items)
        for i, item in enumerate(final):  # the completed response has the last word on each item
            if isinstance(item, dict) and i not in items:
                items[i] = item
        texts: list[str] = []
        calls: list[ToolCall] = []
        layout: list[dict[str, Any]] = []
        for i, item in sorted(items.items()):
            kind = item.get("type")
            if kind == "message":
                content = item.get("content")
                parts: list[Any] = content if isinstance(content, list) else []
                done = "".join(str(p.get("text") or p.get("refusal") or "") for p in parts if isinstance(p, dict))
                texts.append(done or "".join(self.text.get(i, [])))
                layout.append({"type": "message"})
            elif kind == "function_call":
                args = item.get("arguments") if isinstance(item.get("arguments"), str) and item.get("arguments") \
                    else "".join(self.args.get(i, []))
                call = _clean_call({"id": item.get("call_id"), "function": {"name": item.get("name"),
                                                                            "arguments": args or "{}"}}, i)
                if call:
                    calls.append(call)
                    layout.append({"type": "function_call", "call_id": call["id"]})
            elif kind == "reasoning":
                layout.append({k: item[k] for k in ("type", "id", "encrypted_content", "summary") if k in item})
                if not self.summary:
                    self.summary.extend(str(s.get("text") or "") for s in item.get("summary") or ()
                                        if isinstance(s, dict))
        message: Message = {"role": "assistant", "content": "".join(texts) or None}
        if calls:
            message["tool_calls"] = calls
        if "".join(self.summary).strip():
            message["reasoning"] = "".join(self.summary).strip()
        if any(e["type"] == "reasoning" for e in layout):
            message["provider_data"] = {"wire": "openai-responses", "items": layout}
        finish = "tool_calls" if calls else "stop"
        if response.get("status") == "incomplete":
            reason = (response.get("incomplete_details") or {}).get("reason")
            finish = "content_filter" if reason == "content_filter" else "length"
        return message, finish


class ResponsesProvider:
    name = "openai-responses"

    def __init__(self, *, base_url: str, api_key: str | None, client: httpx.AsyncClient,
                 extra_headers: dict[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._url = self.base_url + "/responses"
        self._client = client
        self._headers = {"content-type": "application/json", **(extra_headers or {})}
        if api_key:
            self._headers["authorization"] = f"Bearer {api_key}"
        self._secrets = (api_key,) if api_key else ()

    def _body(self, request: ProviderRequest) -> bytes:
        body: dict[str, Any] = {"model": request.model, "input": to_input(request.messages), "stream": request.stream,
                                "store": False, "include": ["reasoning.encrypted_content"]}
        if request.system:
            body["instructions"] = request.system
        if request.tools and request.tool_choice not in ("none", "text"):
            body["tools"] = _tools(request.tools)
            if request.tool_choice:
                body["tool_choice"] = request.tool_choice
        if request.max_tokens is not None:
            body["max_output_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return _dumps(body).encode()

    async def aclose(self) -> None:
        """The HTTP client belongs to the agent, which closes it."""

    async def complete(self, request: ProviderRequest, sink: StreamSink | None = None) -> ProviderResponse:
        return await post(self._client, self._url, self._body(request), self._headers, model=request.model,
                          purpose=request.purpose, stream=request.stream, secrets=self._secrets,
                          read_stream=lambda r: self._read_stream(r, request, sink),
                          read_whole=lambda data: self._read_whole(request, data), shape="a Responses object")

    def _read_whole(self, request: ProviderRequest, data: Any) -> ProviderResponse:
        if not isinstance(data, dict) or not isinstance(data.get("output"), list):
            raise TypeError("no output")
        out = _Output()
        out.response = data
        return self._finish(request, out)

    async def _read_stream(self, resp: httpx.Response, request: ProviderRequest,
                           sink: StreamSink | None) -> ProviderResponse:
        out = _Output()
        async for kind, ev in json_events(resp, request.model, last=FINAL):
            if kind == "response.failed":
                failed = ev.get("response")
                failed = failed if isinstance(failed, dict) else {}
                raise stream_error(_dumps({"error": failed.get("error") or {"message": "the response failed"}}),
                                   request.model)
            shown = out.event(ev)
            if shown and sink:
                callback = sink.on_reasoning if shown[0] == "reasoning" else sink.on_text
                if callback:
                    await callback(shown[1])
        if out.response is None:
            raise ProviderError("server_error", "the response stream ended before the model finished",
                                model=request.model)
        return self._finish(request, out)

    def _finish(self, request: ProviderRequest, out: _Output) -> ProviderResponse:
        response = out.response or {}
        if response.get("status") == "failed":
            raise stream_error(_dumps({"error": response.get("error") or {}}), request.model)
        message, finish = out.message()
        return ProviderResponse(message=message, finish_reason=finish, usage=_usage(response.get("usage")),
                                model=request.model, raw={})
