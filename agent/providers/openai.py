"""OpenAI-compatible chat completions (OpenAI, OpenRouter, vLLM, llama.cpp, Ollama, LM Studio)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

import httpx

from .base import ProviderRequest, ProviderResponse, StreamSink
from .chat_stream import ChatStream
from .errors import ProviderError
from .http import post
from .sse import DONE, json_events
from ..types import INTERNAL_KEYS, Message, ToolCall, Usage, text_of

# The one reasoning field sent back (DeepSeek, xAI, Qwen accept it; ``reasoning`` is not: Groq refuses it).
ECHO_FIELD = "reasoning_content"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def wire_message(message: Message, origin: str | None = None, echo: str | None = None) -> dict[str, Any]:
    """The OpenAI form of an internal message: internal keys dropped (and ``name`` on tool results).

    An assistant message written by this very endpoint (``origin``) gets back the reasoning field it came
    with (DeepSeek's thinking mode refuses a tool loop without it); any other endpoint never sees it.
    ``echo`` names the field an endpoint has been seen to send: its other assistant tool-call messages get
    it empty, as DeepSeek requires of messages it did not write."""
    if message.get("role") == "tool":
        wire_tool = {k: v for k, v in message.items() if k in ("role", "content", "tool_call_id")}
        if isinstance(wire_tool.get("content"), list):  # chat completions take no images in tool results
            wire_tool["content"] = text_of(message)
        return wire_tool
    wire = {k: v for k, v in message.items() if k not in INTERNAL_KEYS}
    if wire.get("role") != "assistant":
        return wire
    if wire.get("content") is None and not wire.get("tool_calls"):
        wire["content"] = ""  # the API wants content on an assistant message without tool calls
    data = message.get("provider_data")
    fields = data.get("fields") if isinstance(data, dict) and data.get("wire") == "openai" \
        and origin is not None and data.get("origin") == origin else None
    if isinstance(fields, dict) and fields:
        if isinstance(fields.get(ECHO_FIELD), str):
            wire[ECHO_FIELD] = fields[ECHO_FIELD]
    elif echo and wire.get("tool_calls"):
        wire[echo] = ""
    return wire


def encode_messages(messages: Sequence[Message], cache: dict[int, Any] | None, origin: str | None = None,
                    echo: str | None = None) -> bytes:
    """The JSON array of wire messages. Each message is encoded once per endpoint and reused while it lives."""
    if cache is None:
        return _dumps([wire_message(m, origin, echo) for m in messages]).encode()
    parts: list[str] = []
    key = (origin, echo)
    for message in messages:
        hit = cache.get(id(message))
        if hit is None or hit[0] is not message or hit[2] != key:
            hit = (message, _dumps(wire_message(message, origin, echo)), key)
            cache[id(message)] = hit
        parts.append(hit[1])
    if len(cache) > 2 * len(messages) + 16:
        live = {id(m) for m in messages}
        for stale in [k for k in cache if k not in live]:
            del cache[stale]
    return ("[" + ",".join(parts) + "]").encode()


def _usage(raw: Any) -> Usage:
    raw = raw if isinstance(raw, dict) else {}
    details = raw.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, dict) else 0
    return {"prompt_tokens": int(raw.get("prompt_tokens") or 0),
            "completion_tokens": int(raw.get("completion_tokens") or 0),
            "cached_tokens": int(cached or 0)}


class OpenAIProvider:
    name = "openai"

    def __init__(self, *, base_url: str, api_key: str | None, client: httpx.AsyncClient,
                 tool_mode: str = "native", extra_headers: dict[str, str] | None = None,
                 act_first: bool = False) -> None:
        self.base_url = base_url.rstrip("/")
        self._url = self.base_url + "/chat/completions"
        self._client = client
        self.tool_mode = tool_mode
        # json mode: at the start of a turn the schema has no final_answer, so a small model looks before
        # it answers (1.5B models otherwise claim edits they never made).
        self.act_first = act_first
        self._headers = {"content-type": "application/json", **(extra_headers or {})}
        if api_key:
            self._headers["authorization"] = f"Bearer {api_key}"
        self._secrets = (api_key,) if api_key else ()
        # The reasoning field this endpoint has been seen to send (``reasoning_content``): sent back on
        # assistant tool-call messages (see ``wire_message``).
        self._echo: str | None = None

    def _body(self, request: ProviderRequest, messages: Sequence[Message]) -> bytes:
        head: dict[str, Any] = {"model": request.model, "stream": request.stream}
        if request.stream:
            head["stream_options"] = {"include_usage": True}
        if request.tools:
            head["tools"] = list(request.tools)
            if request.tool_choice and self.tool_mode != "json":
                head["tool_choice"] = "none" if request.tool_choice == "text" else request.tool_choice
            if self.tool_mode == "json" and request.tool_choice != "text":
                from .json_mode import build_response_format

                turn_start = bool(messages) and messages[-1].get("role") == "user"
                must_act = (self.act_first and turn_start) or request.tool_choice == "required"
                offered = [t for t in request.tools if t.get("function", {}).get("name") not in request.held_back]
                head["response_format"] = build_response_format(
                    () if request.tool_choice == "none" else offered, allow_final=not must_act, paths=request.paths,
                    path_tools=request.path_tools)
        if request.max_tokens is not None:
            head["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            head["temperature"] = request.temperature
        system: Message = {"role": "system", "content": request.system}
        msgs = encode_messages([system, *messages] if request.system else messages, request.cache,
                               self.base_url, self._echo)
        return _dumps(head)[:-1].encode() + b',"messages":' + msgs + b"}"

    def _prepare(self, request: ProviderRequest) -> Sequence[Message]:
        if self.tool_mode == "json" and request.tools and request.messages:
            from .json_mode import JSON_MODE_SYSTEM_NOTE

            # On the latest user message (a copy): after a tool result the note makes small models
            # re-run the tool instead of answering.
            for i in range(len(request.messages) - 1, -1, -1):
                if request.messages[i].get("role") == "user":
                    msg = dict(request.messages[i])
                    content = msg.get("content")
                    if isinstance(content, list):
                        msg["content"] = [*content, {"type": "text", "text": JSON_MODE_SYSTEM_NOTE}]
                    else:
                        msg["content"] = f"{content or ''}\n\n{JSON_MODE_SYSTEM_NOTE}"
                    return [*request.messages[:i], msg, *request.messages[i + 1:]]  # type: ignore[list-item]
        return request.messages

    async def aclose(self) -> None:
        """The HTTP client belongs to the agent, which closes it."""

    async def complete(self, request: ProviderRequest, sink: StreamSink | None = None) -> ProviderResponse:
        body = self._body(request, self._prepare(request))
        return await post(self._client, self._url, body, self._headers, model=request.model, purpose=request.purpose,
                          stream=request.stream, secrets=self._secrets,
                          read_stream=lambda r: self._read_stream(r, request, sink),
                          read_whole=lambda data: self._read_whole(request, data), shape="a chat completion")

    def _read_whole(self, request: ProviderRequest, data: Any) -> ProviderResponse:
        choice = data["choices"][0]
        raw_msg = choice.get("message") or {}
        if not isinstance(raw_msg, dict):
            raise TypeError("message is not an object")
        parsed = ChatStream()
        parsed.feed({"choices": [{"delta": raw_msg, "finish_reason": choice.get("finish_reason")}]})
        return self._finish(request, parsed, data.get("usage"), data)

    async def _read_stream(self, resp: httpx.Response, request: ProviderRequest,
                           sink: StreamSink | None) -> ProviderResponse:
        parsed = ChatStream()
        done = False
        json_stream = None
        if self.tool_mode == "json" and request.tools and request.tool_choice != "text":
            from .json_mode import FinalAnswerStream

            json_stream = FinalAnswerStream()
        on_text = sink.on_text if sink else None
        on_reasoning = sink.on_reasoning if sink else None
        async for name, chunk in json_events(resp, request.model, last=(DONE,)):
            if name == DONE:  # the body is drained after it
                done = True
                continue
            for kind, piece in parsed.feed(chunk):
                if kind == "reasoning":
                    if on_reasoning:
                        await on_reasoning(piece)
                elif on_text:
                    shown = json_stream.feed(piece) if json_stream else piece
                    if shown:
                        await on_text(shown)
        if parsed.finish is None:
            if not done:
                raise ProviderError("server_error", "the response stream ended before the model finished (no [DONE])",
                                    model=request.model)
            parsed.finish = "tool_calls" if parsed.calls() else "stop"  # some servers never send one
        return self._finish(request, parsed, parsed.usage, {})

    def _finish(self, request: ProviderRequest, parsed: ChatStream, usage: Any, raw: dict[str, Any]) -> ProviderResponse:
        content: str | None = "".join(parsed.text) or None
        reasoning = "".join(parsed.reasoning)
        finish = parsed.finish or "stop"
        calls = [c for c in (_clean_call(c, i) for i, c in enumerate(parsed.calls())) if c]
        if request.tool_choice == "text":
            pass  # asked for text: a reply that looks like a call stays text
        elif self.tool_mode == "json" and request.tools and content and not calls:
            from .json_mode import parse_json_reply

            content, calls = parse_json_reply(content)
            if calls and finish == "stop":
                finish = "tool_calls"
        elif request.tools and content and not calls:
            from .json_mode import extract_tool_calls

            names = [str(t.get("function", {}).get("name")) for t in request.tools]
            found = extract_tool_calls(content, names)
            if found is not None:
                content, calls = found
                if finish == "stop":
                    finish = "tool_calls"
        message: Message = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        if reasoning:
            message["reasoning"] = reasoning
        fields = parsed.fields()
        if fields:
            message["provider_data"] = {"wire": "openai", "origin": self.base_url, "fields": fields}
            if ECHO_FIELD in fields:
                self._echo = ECHO_FIELD
        return ProviderResponse(message=message, finish_reason=finish, usage=_usage(usage), model=request.model,
                                raw=raw)


def _clean_call(raw: Any, index: int) -> ToolCall | None:
    if not isinstance(raw, dict):
        return None
    fn = raw.get("function") or {}
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    args = fn.get("arguments")
    if args is None:
        args = "{}"
    elif not isinstance(args, str):
        args = json.dumps(args)
    call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else f"call_{uuid.uuid4().hex[:16]}"
    return {"id": str(call_id), "type": "function", "function": {"name": name, "arguments": args}}
