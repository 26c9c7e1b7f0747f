"""Step 1 of compression: shrink old tool results without a model call.

Identical results are deduplicated (the newest copy stays, older ones become a one-line
pointer), then long results become one-line digests: tool name, arguments, size, first line.
Both work copy-on-write on a list of messages and keep the per-message token list in step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, cast

from .tokens import estimate_message
from ..types import Message, ToolCall, text_of

_HINT_HEADER = re.compile(r"\[Project instructions from ([^\]\n]+)\]")
DEDUPE_MIN_CHARS = 200
ARG_VALUE_CHARS = 60
ARGS_CHARS = 160
FIRST_LINE_CHARS = 120


def calls_by_id(messages: Sequence[Message]) -> dict[str, ToolCall]:
    out: dict[str, ToolCall] = {}
    for m in messages:
        if m.get("role") == "assistant":
            for call in m.get("tool_calls") or ():
                out[call.get("id", "")] = call
    return out


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= ARG_VALUE_CHARS else text[: ARG_VALUE_CHARS - 3] + "..."


def args_summary(arguments: str) -> str:
    """``path='a.py', limit=20`` from a call's JSON arguments, shortened."""
    try:
        parsed = json.loads(arguments) if arguments else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        text = ", ".join(f"{k}={_short(v)!r}" if isinstance(v, str) else f"{k}={_short(v)}"
                         for k, v in parsed.items())
    else:
        text = _short(arguments)
    return text if len(text) <= ARGS_CHARS else text[: ARGS_CHARS - 3] + "..."


def call_label(message: Message, calls: dict[str, ToolCall]) -> str:
    call = calls.get(message.get("tool_call_id", ""))
    name = message.get("name") or (call["function"]["name"] if call else "tool")
    args = args_summary(call["function"]["arguments"]) if call else ""
    return f"{name}({args})"


def first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 3] + "..."
    return ""


def _replace(work: list[Message], tokens: list[int], i: int, content: str, how: str) -> None:
    old = work[i]
    meta = dict(old.get("meta") or {})
    meta["pruned"] = how
    new = cast(Message, {**old, "content": content, "meta": meta})
    work[i] = new
    tokens[i] = estimate_message(new)


def dedupe(work: list[Message], tokens: list[int], upto: int, calls: dict[str, ToolCall]) -> int:
    """Replace older copies (index < ``upto``) of identical tool results; the newest copy stays."""
    seen: set[tuple[str, str]] = set()
    changed = 0
    for i in range(len(work) - 1, -1, -1):
        m = work[i]
        if m.get("role") != "tool":
            continue
        text = text_of(m)
        if len(text) < DEDUPE_MIN_CHARS:
            continue
        key = (m.get("name") or "", text)
        if key not in seen:
            seen.add(key)
            continue
        if i >= upto:
            continue
        pointer = (f"[Same output as a later {call_label(m, calls)} result ({len(text)} chars); "
                   "only the newest copy is kept.]")
        _replace(work, tokens, i, pointer, "duplicate")
        changed += 1
    return changed


def digest_text(m: Message, calls: dict[str, ToolCall]) -> str:
    text = text_of(m)
    lines = text.count("\n") + 1
    status = ", an error" if (m.get("meta") or {}).get("error") else ""
    head = first_line(text)
    hints = _HINT_HEADER.findall(text) if "[Project instructions from " in text else []
    carried = f" It carried the project instructions of {', '.join(hints)}; read them again if needed." if hints else ""
    return (f"[Old tool output digested to save context: {call_label(m, calls)} returned {len(text)} chars "
            f"in {lines} lines{status}. First line: {head!r}. Call the tool again if you need it.{carried}]")


def digest(work: list[Message], tokens: list[int], upto: int, limit_chars: int,
           calls: dict[str, ToolCall], start: int = 0) -> int:
    """Turn tool results in ``[start, upto)`` longer than ``limit_chars`` into one-line digests."""
    changed = 0
    for i in range(start, min(upto, len(work))):
        m = work[i]
        if m.get("role") != "tool" or (m.get("meta") or {}).get("pruned"):
            continue
        content = m.get("content")
        size = len(content) if isinstance(content, str) else len(text_of(m))
        if size <= limit_chars:
            continue
        _replace(work, tokens, i, digest_text(m, calls), "digest")
        changed += 1
    return changed
