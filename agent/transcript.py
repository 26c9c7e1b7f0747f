"""Transcript invariants (docs/loop.md §3): checking them, and repairing any message list.

Shape: system?, user, then runs of assistant/tool. Every assistant tool call is answered by
exactly one tool message, in call order, before anything else. No two user or two assistant
messages in a row. A user message after tool results is legal (a steer, or the next turn).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, cast

from .types import Message, ToolCall

MISSING_RESULT = "error: this tool call has no recorded result (the turn ended before it ran)"
LEADING_PLACEHOLDER = "(earlier conversation was not recorded)"
STOPPED_UNANSWERED = "(no answer: the previous run stopped before answering)"


def violations(messages: Sequence[Message]) -> list[str]:
    """Every way ``messages`` breaks the invariants; empty when it is valid."""
    problems: list[str] = []
    pending: list[str] = []
    prev: str | None = None
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "system":
            if i != 0:
                problems.append(f"#{i}: system message after the start")
            prev = role
            continue
        if not content_ok(msg.get("content"), role) or not MESSAGE_KEYS.issuperset(msg):
            problems.append(f"#{i}: malformed content or unknown keys")  # a damaged stored row
        if pending and role != "tool":
            problems.append(f"#{i}: {role} message while tool calls {pending} have no result")
            pending = []
        if role == "user":
            if prev == "user":
                problems.append(f"#{i}: two user messages in a row")
        elif role == "assistant":
            if prev in (None, "system"):
                problems.append(f"#{i}: the transcript starts with an assistant message")
            if prev == "assistant":
                problems.append(f"#{i}: two assistant messages in a row")
            calls = msg.get("tool_calls") or []
            if not isinstance(calls, list) or not all(
                    isinstance(c, dict) and isinstance(c.get("id"), str) and isinstance(c.get("function"), dict)
                    for c in calls):
                problems.append(f"#{i}: malformed tool calls")  # a damaged stored row
                calls = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
            pending = [str(c.get("id", "")) for c in calls]
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if not pending:
                problems.append(f"#{i}: tool message {call_id!r} without a pending call")
            elif call_id != pending[0]:
                problems.append(f"#{i}: tool message {call_id!r} out of order (expected {pending[0]!r})")
                if call_id in pending:
                    pending.remove(call_id)
            else:
                pending.pop(0)
        else:
            problems.append(f"#{i}: unknown role {role!r}")
        prev = role
    if pending:
        problems.append(f"end: tool calls {pending} have no result")
    return problems


PART_TYPES = {"user": frozenset({"text", "image_url", "input_audio", "file"}),
              "assistant": frozenset({"text", "refusal"}), "tool": frozenset({"text"}), "system": frozenset({"text"})}
MESSAGE_KEYS = frozenset(Message.__annotations__)


def _part_ok(part: Any, allowed: frozenset[str]) -> bool:
    if not isinstance(part, dict) or part.get("type") not in allowed:
        return False
    kind = part["type"]
    if kind in ("text", "refusal"):
        return isinstance(part.get(kind), str)
    if kind == "image_url":
        image = part.get("image_url")
        return isinstance(image, dict) and isinstance(image.get("url"), str)
    return True


def content_ok(content: Any, role: Any) -> bool:
    """Whether a message's content has a shape the model APIs take: text, None, or content parts of a known type
    for the role (a damaged stored row can hold anything)."""
    if content is None or isinstance(content, str):
        return True
    allowed = PART_TYPES.get(role) if isinstance(role, str) else None
    return isinstance(content, list) and allowed is not None and all(_part_ok(p, allowed) for p in content)


def clean_content(content: Any, role: Any) -> Any:
    """``content`` with what ``content_ok`` refuses left out: parts of an unknown type or shape dropped (a list
    left empty becomes ""), anything else taken as its text."""
    if content_ok(content, role):
        return content
    if not isinstance(content, list):
        return str(content)
    allowed = PART_TYPES.get(role, frozenset({"text"})) if isinstance(role, str) else frozenset({"text"})
    parts = [p for p in content if _part_ok(p, allowed)]
    return parts or ""


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p)
    return str(content)


def _merge_content(a: Any, b: Any) -> Any:
    if isinstance(a, list) or isinstance(b, list):
        parts: list[Any] = []
        for c in (a, b):
            if isinstance(c, list):
                parts.extend(c)
            elif c:
                parts.append({"type": "text", "text": str(c)})
        return parts
    ta, tb = _text(a), _text(b)
    return f"{ta}\n\n{tb}" if ta and tb else (ta or tb)


def _clean_call(raw: Any, index: int, seen: set[str]) -> ToolCall | None:
    if not isinstance(raw, dict):
        return None
    fn = raw.get("function")
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn.get("name"):
        return None
    args = fn.get("arguments", "{}")
    if not isinstance(args, str):
        args = json.dumps(args)
    call_id = raw.get("id")
    if not isinstance(call_id, str) or not call_id or call_id in seen:
        call_id = f"call_repaired_{index}_{len(seen)}"
    seen.add(call_id)
    return {"id": call_id, "type": "function", "function": {"name": fn["name"], "arguments": args}}


def _tool_result(call: ToolCall, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"],
            "content": content, "meta": {"error": True, "repaired": True}}


def repair(messages: Iterable[Any]) -> list[Message]:
    """A new list that satisfies every invariant, keeping all content it can.

    Never mutates its input. Orphan tool results are dropped; missing results are filled with an
    error result; duplicates are dropped; results are put in call order; adjacent user or
    assistant messages are merged; a stray system message later on becomes user text.
    """
    out: list[Message] = []
    seen_ids: set[str] = set()
    items = [m for m in messages if isinstance(m, dict)]
    i = 0
    while i < len(items):
        raw = items[i]
        role = raw.get("role")
        i += 1
        if role == "system":
            if not out:
                out.append({"role": "system", "content": _text(raw.get("content"))})
                continue
            role, raw = "user", {"role": "user", "content": _text(raw.get("content"))}
        if role == "user":
            msg = cast(Message, {k: v for k, v in raw.items() if k in ("role", "content", "meta")})
            msg["content"] = clean_content(msg.get("content"), "user")
            if msg.get("content") is None:
                msg["content"] = ""
            if out and out[-1].get("role") == "user":
                prev = dict(out[-1])
                prev["content"] = _merge_content(prev.get("content"), msg.get("content"))
                out[-1] = cast(Message, prev)
            else:
                out.append(msg)
            continue
        if role == "tool":
            continue  # reached only for orphans: answered ones are consumed with their call below
        if role != "assistant":
            continue
        msg = cast(Message, {k: v for k, v in raw.items() if k != "tool_calls" and k in MESSAGE_KEYS})
        if "content" in msg:
            msg["content"] = clean_content(msg["content"], "assistant")
        calls = [c for c in (_clean_call(c, j, seen_ids) for j, c in enumerate(raw.get("tool_calls") or []))
                 if c is not None]
        if not out or out[-1].get("role") == "system":
            out.append({"role": "user", "content": LEADING_PLACEHOLDER})
        if out[-1].get("role") == "assistant":
            earlier = out.pop()
            msg["content"] = _merge_content(earlier.get("content"), msg.get("content")) or None
            if "provider_data" in earlier and "provider_data" not in msg:  # what a provider needs back stays
                msg["provider_data"] = earlier["provider_data"]
                if "reasoning" in earlier and "reasoning" not in msg:
                    msg["reasoning"] = earlier["reasoning"]
        if calls:
            msg["tool_calls"] = calls
        out.append(msg)
        if not calls:
            continue
        # Gather the tool messages that follow, match them to this call batch.
        results: dict[str, Message] = {}
        original_ids = [c.get("id") for c in raw.get("tool_calls") or [] if isinstance(c, dict)]
        id_map = {orig: new["id"] for orig, new in zip(original_ids, calls, strict=False) if isinstance(orig, str)}
        while i < len(items) and items[i].get("role") == "tool":
            t = items[i]
            i += 1
            raw_id = t.get("tool_call_id")
            tid = id_map.get(raw_id, raw_id) if isinstance(raw_id, str) else None
            if isinstance(tid, str) and any(c["id"] == tid for c in calls) and tid not in results:
                tm = cast(Message, {k: v for k, v in t.items() if k in ("role", "content", "name", "meta")})
                tm["tool_call_id"] = tid
                tm["content"] = _text(t.get("content"))
                results[tid] = tm
        for call in calls:
            out.append(results.get(call["id"]) or _tool_result(call, MISSING_RESULT))
    return out


def settled(messages: list[Message], *, stopped: bool = True) -> list[Message]:
    """A stored transcript made ready to be continued: ``messages`` itself when it needs nothing, else a new list.
    It is repaired when it breaks the rules (a crash mid-round leaves calls without results), and, when
    ``stopped`` (no turn is running on it any more), a trailing user message whose run stopped before any
    answer gets a placeholder answer, so the next prompt never follows it directly."""
    fixed = repair(messages) if violations(messages) else messages
    if stopped and fixed and fixed[-1].get("role") == "user":
        fixed = [*fixed, {"role": "assistant", "content": STOPPED_UNANSWERED, "meta": {"placeholder": True}}]
    return fixed
