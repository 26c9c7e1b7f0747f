"""OpenAI Responses wire format: ``response`` objects and ``event: response.*`` SSE.

A reply's ``reasoning`` becomes a reasoning item with a summary and an ``encrypted_content`` blob, the
way OpenAI's reasoning models answer a request that asks ``include: ["reasoning.encrypted_content"]``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from .openai_wire import error_body
from .replies import RenderContext, Reply, WireFormat, resolve_usage, split_args, split_text


def _usage(reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    u = resolve_usage(reply, ctx.prompt_chars)
    return {"input_tokens": u["prompt"], "input_tokens_details": {"cached_tokens": u["cached"]},
            "output_tokens": u["completion"], "output_tokens_details": {"reasoning_tokens": u["reasoning"]},
            "total_tokens": u["prompt"] + u["completion"]}


def _output(reply: Reply, ctx: RenderContext) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.empty:
        return items
    if reply.reasoning is not None:
        items.append({"id": ctx.new_id("rs_"), "type": "reasoning", "encrypted_content": ctx.new_id("enc_"),
                      "summary": [{"type": "summary_text", "text": reply.reasoning}] if reply.reasoning else []})
    if reply.content:
        items.append({"id": ctx.new_id("msg_"), "type": "message", "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "annotations": [], "text": reply.content}]})
    for c in reply.tool_calls:
        items.append({"id": ctx.new_id("fc_"), "type": "function_call", "status": "completed",
                      "arguments": c.arguments_json(), "call_id": c.id or ctx.new_id("call_"), "name": c.name})
    return items


def _response(reply: Reply, ctx: RenderContext, rid: str, output: list[dict[str, Any]], done: bool) -> dict[str, Any]:
    status = "completed" if done else "in_progress"
    details = None
    if done and reply.finish in ("length", "content_filter"):
        status = "incomplete"
        details = {"reason": "max_output_tokens" if reply.finish == "length" else "content_filter"}
    return {"id": rid, "object": "response", "created_at": int(time.time()), "status": status, "error": None,
            "incomplete_details": details, "model": ctx.model, "output": output if done else [], "store": False,
            "usage": _usage(reply, ctx) if done else None}


def json_body(reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    return _response(reply, ctx, ctx.new_id("resp_"), _output(reply, ctx), True)


def sse_frames(reply: Reply, ctx: RenderContext) -> list[bytes]:
    rid = ctx.new_id("resp_")
    output = _output(reply, ctx)
    frames: list[bytes] = []
    seq = 0

    def ev(kind: str, **fields: Any) -> None:
        nonlocal seq
        data = json.dumps({"type": kind, "sequence_number": seq, **fields}, ensure_ascii=False)
        frames.append(f"event: {kind}\ndata: {data}\n\n".encode())
        seq += 1

    ev("response.created", response=_response(reply, ctx, rid, output, False))
    for index, item in enumerate(output):
        kind = item["type"]
        if kind == "reasoning":
            ev("response.output_item.added", output_index=index, item={**item, "summary": []})
            for j, part in enumerate(item["summary"]):
                ev("response.reasoning_summary_part.added", item_id=item["id"], output_index=index, summary_index=j,
                   part={"type": "summary_text", "text": ""})
                for piece in split_text(part["text"], reply.chunk_size):
                    ev("response.reasoning_summary_text.delta", item_id=item["id"], output_index=index,
                       summary_index=j, delta=piece)
        elif kind == "message":
            ev("response.output_item.added", output_index=index, item={**item, "content": [], "status": "in_progress"})
            for piece in split_text(item["content"][0]["text"], reply.chunk_size):
                ev("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0, delta=piece)
        else:
            ev("response.output_item.added", output_index=index, item={**item, "arguments": "", "status": "in_progress"})
            for frag in split_args(item["arguments"]):
                ev("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=frag)
        ev("response.output_item.done", output_index=index, item=item)
    done = _response(reply, ctx, rid, output, True)
    ev("response.incomplete" if done["status"] == "incomplete" else "response.completed", response=done)
    return frames


def garbage_frames(malformed: bool) -> list[bytes]:
    if malformed:
        return [b'event: response.created\ndata: {"type": "response.created", "response": {}}\n\n',
                b"event: response.output_text.delta\ndata: {broken\n\n", b"garbage line without a field name\n\n"]
    return [b"data: <html><body>502 Bad Gateway</body></html>\n\n", b"data: not json at all\n\n"]


WIRE = WireFormat("responses", json_body, sse_frames, error_body, garbage_frames)
