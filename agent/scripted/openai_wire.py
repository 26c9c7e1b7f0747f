"""OpenAI chat-completions wire format: ``chat.completion`` objects and ``chat.completion.chunk`` SSE."""

from __future__ import annotations

import json
import time
from typing import Any

from .replies import RenderContext, Reply, WireFormat, resolve_usage, split_args, split_text

_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 402: "insufficient_quota",
                403: "permission_error", 404: "invalid_request_error", 408: "timeout",
                413: "invalid_request_error", 422: "invalid_request_error", 429: "rate_limit_error"}
_ERROR_CODES = {401: "invalid_api_key", 402: "insufficient_quota", 404: "model_not_found",
                429: "rate_limit_exceeded"}


def _usage(reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    u = resolve_usage(reply, ctx.prompt_chars)
    return {"prompt_tokens": u["prompt"], "completion_tokens": u["completion"],
            "total_tokens": u["prompt"] + u["completion"],
            "prompt_tokens_details": {"cached_tokens": u["cached"]},
            "completion_tokens_details": {"reasoning_tokens": u["reasoning"]}}


def _call_ids(reply: Reply, ctx: RenderContext) -> list[str]:
    return [c.id or ctx.new_id("call_") for c in reply.tool_calls]


def json_body(reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    """A complete non-streaming ``chat.completion``."""
    message: dict[str, Any] = {"role": "assistant", "content": None if reply.empty else reply.content,
                               "refusal": None}
    if reply.reasoning is not None and not reply.empty:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls and not reply.empty:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json()}}
            for c, cid in zip(reply.tool_calls, _call_ids(reply, ctx), strict=True)]
    return {"id": ctx.new_id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()),
            "model": ctx.model, "system_fingerprint": "fp_scripted",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish}],
            "usage": _usage(reply, ctx)}


def sse_frames(reply: Reply, ctx: RenderContext) -> list[bytes]:
    """``data: <chunk>`` frames: role, reasoning, content, tool calls, finish, usage?, ``[DONE]``."""
    base_id = ctx.new_id("chatcmpl-")
    created = int(time.time())
    frames: list[bytes] = []
    dumps = json.dumps

    def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
        obj: dict[str, Any] = {"id": base_id, "object": "chat.completion.chunk", "created": created,
                               "model": ctx.model, "system_fingerprint": "fp_scripted",
                               "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                            "finish_reason": finish}]}
        if ctx.include_usage:
            obj["usage"] = None
        frames.append(b"data: " + dumps(obj, ensure_ascii=False).encode() + b"\n\n")

    chunk({"role": "assistant", "content": "", "refusal": None})
    if not reply.empty:
        for piece in split_text(reply.reasoning or "", reply.chunk_size):
            chunk({"reasoning_content": piece})
        for piece in split_text(reply.content or "", reply.chunk_size):
            chunk({"content": piece})
        for index, (c, cid) in enumerate(zip(reply.tool_calls, _call_ids(reply, ctx), strict=True)):
            chunk({"tool_calls": [{"index": index, "id": cid, "type": "function",
                                   "function": {"name": c.name, "arguments": ""}}]})
            for frag in split_args(c.arguments_json()):
                chunk({"tool_calls": [{"index": index, "function": {"arguments": frag}}]})
    chunk({}, reply.finish)
    if ctx.include_usage:
        obj = {"id": base_id, "object": "chat.completion.chunk", "created": created, "model": ctx.model,
               "system_fingerprint": "fp_scripted", "choices": [], "usage": _usage(reply, ctx)}
        frames.append(b"data: " + dumps(obj).encode() + b"\n\n")
    frames.append(b"data: [DONE]\n\n")
    return frames


def error_body(status: int, message: str, type_: str | None, code: str | None) -> dict[str, Any]:
    """``{"error": {"message", "type", "param", "code"}}``."""
    etype = type_ or _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": etype, "param": None,
                      "code": code if code is not None else _ERROR_CODES.get(status)}}


def garbage_frames(malformed: bool) -> list[bytes]:
    if malformed:
        first = (b'data: {"id": "chatcmpl-x", "object": "chat.completion.chunk", "choices": [{"index": 0, '
                 b'"delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}\n\n')
        return [first,
                b"data: {broken\n\n", b'data: {"choices": [{"delta": {"content": "x"\n\n',
                b"garbage line without a field name\n\n"]
    return [b"data: <html><body>502 Bad Gateway</body></html>\n\n", b"data: not json at all\n\n"]


WIRE = WireFormat("openai", json_body, sse_frames, error_body, garbage_frames)
