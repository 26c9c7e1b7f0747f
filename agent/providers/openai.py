"""OpenAI-compatible chat completions (OpenAI, OpenRouter, vLLM, llama.cpp, Ollama, LM Studio)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

import httpx

from agentls.agent.providers.base import ProviderRequest, ProviderResponse, StreamSink, ToolSchema
from agentls.agent.providers.errors import ProviderError
from agentls.agent.providers.http import post, stream_error
from agentls.agent.providers.sse import drain, iter_sse
from agentls.agent.types import INTERNAL_KEYS, Message, ToolCall, Usage

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def wire_message(message: Message) -> dict[str, Any]:
    """The OpenAI form of an internal message: internal keys dropped (and ``name`` on tool results)."""
    if message.get("role") == "tool":
        return {k: v for k, v in message.items() if k in ("role", "content", "tool_call_id")}
    wire = {k: v for k, v in message.items() if k not in INTERNAL_KEYS}
    if wire.get("role") == "assistant" and wire.get("content") is None and not wire.get("tool_calls"):
        wire["content"] = ""  # the API wants content on an assistant message without tool calls
    return wire


def encode_messages(messages: Sequence[Message], cache: dict[int, Any] | None) -> bytes:
    """The JSON array of wire messages. Each message is encoded once and reused while it lives."""
    if cache is None:
        return _dumps([wire_message(m) for m in messages]).encode()
    parts: list[str] = []
    for message in messages:
        hit = cache.get(id(message))
        if hit is None or hit[0] is not message:
            hit = (message, _dumps(wire_message(message)))
            cache[id(message)] = hit
        parts.append(hit[1])
    if len(cache) > 2 * len(messages) + 16:
        live = {id(m) for m in messages}
        for key in [k for k in cache if k not in live]:
            del cache[key]
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

    def _body(self, request: ProviderRequest, messages: Sequence[Message]) -> bytes:
        head: dict[str, Any] = {"model": request.model, "stream": request.stream}
        if request.stream:
            head["stream_options"] = {"include_usage": True}
        if request.tools:
            head["tools"] = list(request.tools)
            if request.tool_choice:
                head["tool_choice"] = request.tool_choice
            if self.tool_mode == "json":
                from agentls.agent.providers.json_mode import build_response_format

                turn_start = bool(messages) and messages[-1].get("role") == "user"
                head["response_format"] = build_response_format(
                    request.tools, allow_final=not (self.act_first and turn_start))
        if request.max_tokens is not None:
            head["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            head["temperature"] = request.temperature
        system: Message = {"role": "system", "content": request.system}
        msgs = encode_messages([system, *messages] if request.system else messages, request.cache)
        return _dumps(head)[:-1].encode() + b',"messages":' + msgs + b"}"

    def _prepare(self, request: ProviderRequest) -> Sequence[Message]:
        if self.tool_mode == "json" and request.tools and request.messages:
            from agentls.agent.providers.json_mode import JSON_MODE_SYSTEM_NOTE

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
        resp = await post(self._client, self._url, body, self._headers, model=request.model, purpose=request.purpose,
                          stream=request.stream, secrets=self._secrets,
                          read_stream=lambda r: self._read_stream(r, request, sink))
        if isinstance(resp, ProviderResponse):
            return resp
        try:
            data = resp.json()
            choice = data["choices"][0]
            raw_msg = choice.get("message") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ProviderError("format_error", f"the model server sent a response that is not a chat completion: "
                                f"{resp.text[:200]!r}", model=request.model) from exc
        calls = [_clean_call(c, i) for i, c in enumerate(raw_msg.get("tool_calls") or [])]
        return self._finish(request, raw_msg.get("content"),
                            raw_msg.get("reasoning_content") or raw_msg.get("reasoning"),
                            [c for c in calls if c], choice.get("finish_reason") or "stop",
                            _usage(data.get("usage")), data)

    async def _read_stream(self, resp: httpx.Response, request: ProviderRequest,
                           sink: StreamSink | None) -> ProviderResponse:
        text: list[str] = []
        reasoning: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage: Usage | None = None
        done = False
        json_stream = None
        if self.tool_mode == "json" and request.tools:
            from agentls.agent.providers.json_mode import FinalAnswerStream

            json_stream = FinalAnswerStream()
        on_text = sink.on_text if sink else None
        on_reasoning = sink.on_reasoning if sink else None
        events = iter_sse(resp)
        async for event, data in events:
            if data == "[DONE]":
                done = True
                await drain(events)
                break
            try:
                chunk = json.loads(data)
            except ValueError as exc:
                raise ProviderError("format_error", f"the model server sent a malformed stream event: {data[:120]!r}",
                                    model=request.model) from exc
            if not isinstance(chunk, dict):
                raise ProviderError("format_error", "the model server sent a stream event that is not an object",
                                    model=request.model)
            if event == "error" or "error" in chunk:
                raise stream_error(data, request.model)
            if chunk.get("usage"):
                usage = _usage(chunk["usage"])
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                piece = delta.get("content")
                if piece:
                    text.append(piece)
                    if on_text:
                        shown = json_stream.feed(piece) if json_stream else piece
                        if shown:
                            await on_text(shown)
                thought = delta.get("reasoning_content") or delta.get("reasoning")
                if thought and isinstance(thought, str):
                    reasoning.append(thought)
                    if on_reasoning:
                        await on_reasoning(thought)
                for tc in delta.get("tool_calls") or ():
                    slot = calls.setdefault(int(tc.get("index", len(calls))), {"id": "", "name": "", "args": []})
                    if tc.get("id"):
                        slot["id"] = tc["id"]
                    fn = tc.get("function") or {}
                    if fn.get("name"):
                        slot["name"] += fn["name"]
                    if fn.get("arguments"):
                        slot["args"].append(fn["arguments"])
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
        if finish is None:
            raise ProviderError("server_error", "the response stream ended before the model finished"
                                f"{'' if done else ' (no [DONE])'}", model=request.model)
        tool_calls = [_clean_call({"id": s["id"], "function": {"name": s["name"], "arguments": "".join(s["args"])}}, i)
                      for i, s in sorted(calls.items())]
        return self._finish(request, "".join(text) or None, "".join(reasoning) or None,
                            [c for c in tool_calls if c], finish, usage or _usage(None), {})

    def _finish(self, request: ProviderRequest, content: Any, reasoning: Any, calls: list[ToolCall],
                finish: str, usage: Usage, raw: dict[str, Any]) -> ProviderResponse:
        if content is not None and not isinstance(content, str):
            content = json.dumps(content)
        if self.tool_mode == "json" and request.tools and content and not calls:
            from agentls.agent.providers.json_mode import parse_json_reply

            content, calls = parse_json_reply(content)
            if calls and finish == "stop":
                finish = "tool_calls"
        elif request.tools and content and not calls:
            from agentls.agent.providers.json_mode import extract_tool_calls

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
            message["reasoning"] = str(reasoning)
        return ProviderResponse(message=message, finish_reason=finish, usage=usage, model=request.model, raw=raw)


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


def tool_names(tools: Sequence[ToolSchema]) -> list[str]:
    return [str(t.get("function", {}).get("name")) for t in tools]
