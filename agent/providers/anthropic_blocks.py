"""Anthropic content blocks to and from the internal transcript, thinking blocks kept exactly.

An assistant message keeps, under ``provider_data`` (``{"wire": "anthropic", "blocks": [...]}``), the order
of what the model wrote: each ``thinking`` block with its own signature (a signature-only block too),
each ``redacted_thinking`` block, and markers for its text (``{"type": "text"}``) and tool calls
(``{"type": "tool_use", "id"}``). Sent back, the thinking blocks are verbatim and in place; the text and
the tool calls are the message's current ones (the loop may have joined a continuation to the text).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any

from .layout import Kinds, in_stored_order
from ..data_files import BadData, json_value
from ..types import Message, ToolCall

_DATA_URL = re.compile(r"^data:(?P<mime>[\w/+.-]+);base64,(?P<data>.*)$", re.DOTALL)
THINKING_TYPES = ("thinking", "redacted_thinking")


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """Text and image blocks of an internal ``content`` (a string or OpenAI-style parts)."""
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
        value = json_value(arguments or "{}")
    except BadData:
        return {"_raw_arguments": arguments}
    return value if isinstance(value, dict) else {"value": value}


def _tool_use(call: ToolCall) -> dict[str, Any]:
    return {"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
            "input": _tool_input(call["function"]["arguments"])}


def _thinking_block(entry: Any) -> dict[str, Any] | None:
    """A stored thinking block as the API takes it back, or None when it cannot be sent (no signature)."""
    if not isinstance(entry, dict):
        return None
    if entry.get("type") == "thinking" and isinstance(entry.get("signature"), str) and entry["signature"]:
        return {"type": "thinking", "thinking": str(entry.get("thinking") or ""), "signature": entry["signature"]}
    if entry.get("type") == "redacted_thinking" and isinstance(entry.get("data"), str):
        return {"type": "redacted_thinking", "data": entry["data"]}
    return None


def assistant_blocks(msg: Message) -> list[dict[str, Any]]:
    """The blocks of an assistant message: stored thinking in place, then its text and tool calls."""
    text = content_blocks(msg.get("content"))
    calls = list(msg.get("tool_calls") or [])
    data = msg.get("provider_data")
    layout = data.get("blocks") if isinstance(data, dict) and data.get("wire") == "anthropic" else None
    out: list[dict[str, Any]] = []
    if not isinstance(layout, list):  # transcripts written before provider_data: one block, if signed
        if msg.get("reasoning") and msg.get("reasoning_signature"):
            out.append({"type": "thinking", "thinking": msg["reasoning"], "signature": msg["reasoning_signature"]})
        return [*out, *text, *(_tool_use(c) for c in calls)]
    return in_stored_order(layout, calls, text, _KINDS)


_KINDS = Kinds(THINKING_TYPES, "text", "tool_use", "id", _thinking_block, _tool_use)


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
            user_blocks().extend(content_blocks(msg.get("content")) or [{"type": "text", "text": "(empty)"}])
        elif role == "tool":
            text = msg.get("content")
            result: Any = content_blocks(text) if isinstance(text, list) else text  # text and images
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": msg.get("tool_call_id", ""),
                                     "content": result if result else "(no output)"}
            if (msg.get("meta") or {}).get("error"):
                block["is_error"] = True
            user_blocks().append(block)
        elif role == "assistant":
            blocks = assistant_blocks(msg)
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(empty)"}]})
    return out


def ends_mid_tool_loop_without_thinking(wire: list[dict[str, Any]]) -> bool:
    """Whether the request answers tool calls of an assistant turn that has no thinking block first: the
    API then refuses ``thinking`` ("a final assistant message must start with a thinking block")."""
    if len(wire) < 2 or wire[-1]["role"] != "user":
        return False
    if not any(b.get("type") == "tool_result" for b in wire[-1]["content"]):
        return False
    first = wire[-2]["content"][0] if wire[-2]["content"] else {}
    return first.get("type") not in THINKING_TYPES


def response_message(blocks: list[dict[str, Any]]) -> tuple[Message, list[ToolCall]]:
    """The internal assistant message for a response's blocks (thinking kept under ``provider_data``)."""
    text: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    layout: list[dict[str, Any]] = []
    for block in blocks:
        btype = block.get("type")
        if btype == "text":
            text.append(str(block.get("text") or ""))
            layout.append({"type": "text"})
        elif btype == "thinking":
            if block.get("thinking"):
                thinking.append(str(block["thinking"]))
            layout.append({"type": "thinking", "thinking": str(block.get("thinking") or ""),
                           "signature": str(block.get("signature") or "")})
        elif btype == "redacted_thinking":
            layout.append({"type": "redacted_thinking", "data": str(block.get("data") or "")})
        elif btype == "tool_use":
            arg = block.get("input")
            args = arg if isinstance(arg, str) else json.dumps(arg if arg is not None else {}, ensure_ascii=False)
            call_id = str(block.get("id") or f"toolu_{len(calls)}")
            calls.append({"id": call_id, "type": "function",
                          "function": {"name": str(block.get("name", "")), "arguments": args or "{}"}})
            layout.append({"type": "tool_use", "id": call_id})
    message: Message = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = calls
    if thinking:
        message["reasoning"] = "\n\n".join(thinking)
    if any(b["type"] in THINKING_TYPES for b in layout):
        message["provider_data"] = {"wire": "anthropic", "blocks": layout}
    return message, calls


def image_part(data: bytes, mime: str) -> dict[str, Any]:
    """An OpenAI-style image part (the internal form) from raw bytes."""
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode()}"}}
