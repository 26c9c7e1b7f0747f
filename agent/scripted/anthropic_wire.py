"""Anthropic Messages wire format: ``message`` objects and ``event: X`` / ``data: {...}`` SSE."""

from __future__ import annotations

import json
from typing import Any

from .replies import (
    TO_ANTHROPIC_FINISH,
    RenderContext,
    Reply,
    WireFormat,
    resolve_usage,
    split_args,
    split_text,
)

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
                403: "permission_error", 404: "not_found_error", 408: "timeout_error",
                413: "request_too_large", 422: "invalid_request_error", 429: "rate_limit_error",
                500: "api_error", 504: "timeout_error", 529: "overloaded_error"}


def _usage(reply: Reply, ctx: RenderContext) -> dict[str, int]:
    u = resolve_usage(reply, ctx.prompt_chars)
    return {"input_tokens": max(0, u["prompt"] - u["cached"] - u["creation"]),
            "output_tokens": u["completion"], "cache_read_input_tokens": u["cached"],
            "cache_creation_input_tokens": u["creation"]}


def _stop_reason(reply: Reply) -> str:
    return TO_ANTHROPIC_FINISH.get(reply.finish, reply.finish)


def _tool_input(arguments: str) -> Any:
    """The parsed input object; a string that is not a JSON object is returned verbatim."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments


def _blocks(reply: Reply, ctx: RenderContext) -> list[dict[str, Any]]:
    if reply.empty:
        return []
    blocks: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": ctx.new_id("sig_")})
    if reply.content:
        blocks.append({"type": "text", "text": reply.content})
    for c in reply.tool_calls:
        blocks.append({"type": "tool_use", "id": c.id or ctx.new_id("toolu_"), "name": c.name,
                       "input": _tool_input(c.arguments_json()), "_raw": c.arguments_json()})
    return blocks


def json_body(reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    """A complete non-streaming ``message``."""
    blocks = _blocks(reply, ctx)
    for b in blocks:
        b.pop("_raw", None)
    return {"id": ctx.new_id("msg_"), "type": "message", "role": "assistant", "model": ctx.model,
            "content": blocks, "stop_reason": _stop_reason(reply), "stop_sequence": None,
            "usage": _usage(reply, ctx)}


def _frame(event: str, data: dict[str, Any]) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + json.dumps(data, ensure_ascii=False).encode() + b"\n\n"


def sse_frames(reply: Reply, ctx: RenderContext) -> list[bytes]:
    """message_start, ping, content blocks (start/deltas/stop), message_delta, message_stop."""
    usage = _usage(reply, ctx)
    start_usage = dict(usage, output_tokens=1)
    frames = [_frame("message_start", {"type": "message_start", "message": {
        "id": ctx.new_id("msg_"), "type": "message", "role": "assistant", "model": ctx.model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": start_usage}}),
        _frame("ping", {"type": "ping"})]
    for index, block in enumerate(_blocks(reply, ctx)):
        kind = block["type"]
        if kind == "thinking":
            start: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p}
                      for p in split_text(block["thinking"], reply.chunk_size)]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in split_text(block["text"], reply.chunk_size)]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in split_args(block["_raw"])]
        frames.append(_frame("content_block_start",
                             {"type": "content_block_start", "index": index, "content_block": start}))
        for delta in deltas:
            frames.append(_frame("content_block_delta",
                                 {"type": "content_block_delta", "index": index, "delta": delta}))
        frames.append(_frame("content_block_stop", {"type": "content_block_stop", "index": index}))
    frames.append(_frame("message_delta", {
        "type": "message_delta", "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
        "usage": {"output_tokens": usage["output_tokens"]}}))
    frames.append(_frame("message_stop", {"type": "message_stop"}))
    return frames


def error_body(status: int, message: str, type_: str | None, code: str | None) -> dict[str, Any]:
    """``{"type": "error", "error": {"type", "message"}}`` (Anthropic has no error code)."""
    del code
    etype = type_ or _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": etype, "message": message}}


def garbage_frames(malformed: bool) -> list[bytes]:
    if malformed:
        return [_frame("message_start", {"type": "message_start", "message": {
                    "id": "msg_broken", "type": "message", "role": "assistant", "content": [],
                    "model": "scripted", "stop_reason": None, "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1}}}),
                b"event: content_block_delta\ndata: {broken\n\n",
                b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0\n\n',
                b"garbage line without a field name\n\n"]
    return [b"event: message_start\ndata: <html><body>502 Bad Gateway</body></html>\n\n",
            b"event: content_block_delta\ndata: not json at all\n\n"]


WIRE = WireFormat("anthropic", json_body, sse_frames, error_body, garbage_frames)
