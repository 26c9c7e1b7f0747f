"""A tiny two-wire client and SSE reassembly used by the scripted provider's own tests."""

from __future__ import annotations

import json
from typing import Any

import httpx

from agentls.agent.scripted import ScriptedServer

ANTHROPIC_HEADERS = {"anthropic-version": "2023-06-01", "x-api-key": "test-key"}
USER = [{"role": "user", "content": "hi"}]


def parse_sse(raw: str) -> list[tuple[str | None, str]]:
    """(event name, data) for every SSE event in ``raw``."""
    events: list[tuple[str | None, str]] = []
    for block in raw.replace("\r\n", "\n").split("\n\n"):
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            events.append((name, "\n".join(data)))
    return events


def normalize_openai(obj: dict[str, Any]) -> dict[str, Any]:
    choice = obj["choices"][0]
    msg = choice["message"]
    calls = [(c["function"]["name"], c["function"]["arguments"]) for c in msg.get("tool_calls") or []]
    return {"content": msg.get("content") or "", "reasoning": msg.get("reasoning_content") or "",
            "tool_calls": calls, "finish": choice["finish_reason"], "ids": [c["id"] for c in msg.get("tool_calls") or []]}


def reassemble_openai(raw: str) -> dict[str, Any]:
    events = parse_sse(raw)
    assert events[-1][1] == "[DONE]"
    content, reasoning, finish = "", "", None
    calls: dict[int, dict[str, str]] = {}
    usage = None
    for _, data in events[:-1]:
        chunk = json.loads(data)
        assert chunk["object"] == "chat.completion.chunk"
        if chunk.get("usage"):
            usage = chunk["usage"]
        for choice in chunk["choices"]:
            delta = choice["delta"]
            content += delta.get("content") or ""
            reasoning += delta.get("reasoning_content") or ""
            for tc in delta.get("tool_calls") or []:
                slot = calls.setdefault(tc["index"], {"id": "", "name": "", "arguments": ""})
                slot["id"] += tc.get("id") or ""
                slot["name"] += (tc.get("function") or {}).get("name") or ""
                slot["arguments"] += (tc.get("function") or {}).get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    ordered = [calls[i] for i in sorted(calls)]
    return {"content": content, "reasoning": reasoning, "tool_calls": [(c["name"], c["arguments"]) for c in ordered],
            "finish": finish, "ids": [c["id"] for c in ordered], "usage": usage}


def normalize_anthropic(obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"content": "", "reasoning": "", "tool_calls": [], "ids": [], "signatures": [],
                           "finish": obj["stop_reason"]}
    for b in obj["content"]:
        if b["type"] == "text":
            out["content"] += b["text"]
        elif b["type"] == "thinking":
            out["reasoning"] += b["thinking"]
            out["signatures"].append(b["signature"])
        elif b["type"] == "tool_use":
            out["tool_calls"].append((b["name"], b["input"]))
            out["ids"].append(b["id"])
    return out


def reassemble_anthropic(raw: str) -> dict[str, Any]:
    events = parse_sse(raw)
    names = [n for n, _ in events]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    blocks: dict[int, dict[str, Any]] = {}
    stop = None
    for name, data in events:
        ev = json.loads(data)
        assert ev["type"] == name
        if name == "content_block_start":
            blocks[ev["index"]] = dict(ev["content_block"], _json="")
        elif name == "content_block_delta":
            b, d = blocks[ev["index"]], ev["delta"]
            if d["type"] == "text_delta":
                b["text"] += d["text"]
            elif d["type"] == "thinking_delta":
                b["thinking"] += d["thinking"]
            elif d["type"] == "signature_delta":
                b["signature"] += d["signature"]
            elif d["type"] == "input_json_delta":
                b["_json"] += d["partial_json"]
        elif name == "message_delta":
            stop = ev["delta"]["stop_reason"]
    content = []
    for i in sorted(blocks):
        b = blocks[i]
        raw_json = b.pop("_json")
        if b["type"] == "tool_use":
            b["input"] = json.loads(raw_json) if raw_json else {}
        content.append(b)
    return normalize_anthropic({"content": content, "stop_reason": stop})


class Api:
    """Sends requests in either wire format and returns the normalized answer."""

    def __init__(self, srv: ScriptedServer, client: httpx.AsyncClient) -> None:
        self.srv = srv
        self.client = client

    def openai_body(self, messages: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
        return {"model": "m", "messages": messages if messages is not None else USER, **extra}

    def anthropic_body(self, messages: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
        return {"model": "m", "max_tokens": 1024, "messages": messages if messages is not None else USER, **extra}

    async def post(self, wire: str, body: dict[str, Any], **kw: Any) -> httpx.Response:
        if wire == "openai":
            return await self.client.post(self.srv.openai_url + "/chat/completions", json=body, **kw)
        headers = {**ANTHROPIC_HEADERS, **kw.pop("headers", {})}
        return await self.client.post(self.srv.anthropic_url + "/v1/messages", json=body, headers=headers, **kw)

    def body(self, wire: str, messages: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
        return self.openai_body(messages, **extra) if wire == "openai" else self.anthropic_body(messages, **extra)

    async def complete(self, wire: str, stream: bool, messages: list[dict[str, Any]] | None = None,
                       **extra: Any) -> dict[str, Any]:
        body = self.body(wire, messages, stream=stream, **extra)
        r = await self.post(wire, body)
        assert r.status_code == 200, r.text
        if stream:
            assert r.headers["content-type"].startswith("text/event-stream")
            return reassemble_openai(r.text) if wire == "openai" else reassemble_anthropic(r.text)
        return normalize_openai(r.json()) if wire == "openai" else normalize_anthropic(r.json())
