"""Steps 3 and 4 of compression: the summary prompt, the deterministic fallback, and the summary
message itself (and how to take a previous one apart again so summaries update, never nest)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from ..truncate import cap_text
from .prune import args_summary, call_label, first_line
from ..types import Message, ToolCall, text_of

SECTIONS = ("Goal", "Constraints", "Done", "Current state", "Open questions", "Relevant files")
PATH_KEYS = ("path", "file", "file_path", "filename", "target", "paths", "files")
MIN_MESSAGE_CHARS = 300
MAX_MESSAGE_CHARS = 3000
REQUEST_CHARS = 600
FALLBACK_REQUESTS = 8
FALLBACK_OUTCOMES = 12
FALLBACK_FILES = 50

_INSTRUCTIONS = """\
You are compacting the middle of a conversation between a user and a coding agent that works \
in the user's editor through tools, so the agent can continue the task with less context.
Write a concise, factual summary in Markdown with exactly these sections, in this order:
{sections}
Keep exact file paths, function names, commands, error messages and decisions. Say what was \
completed and what remains; record user preferences and constraints under Constraints. Do not \
invent anything that is not in the conversation. Reply with the summary only."""


def marker(count: int) -> str:
    return f"[Summary of {count} earlier messages]"


def _render(message: Message, calls: dict[str, ToolCall], cap: int) -> str:
    role = message.get("role", "?")
    text = text_of(message)
    if role == "tool":
        label = f"TOOL RESULT {call_label(message, calls)}"
        if (message.get("meta") or {}).get("error"):
            label += " (error)"
        body = cap_text(text, cap)[0]
        return f"{label}:\n{body}"
    lines = [f"{role.upper()}:"]
    if text:
        lines.append(cap_text(text, cap)[0])
    for call in message.get("tool_calls") or ():
        fn = call["function"]
        lines.append(f"-> calls {fn['name']}({args_summary(fn['arguments'])})")
    return "\n".join(lines)


def build_prompt(
    middle: Sequence[Message],
    calls: dict[str, ToolCall],
    *,
    previous: str | None,
    focus: str | None,
    latest_request: str | None,
    max_chars: int,
) -> str:
    """The prompt for the auxiliary model: instructions, the previous summary to update, the
    focus, then the middle messages (each and all capped head+tail to fit ``max_chars``)."""
    parts = [_INSTRUCTIONS.format(sections="\n".join(f"## {s}" for s in SECTIONS))]
    if previous:
        parts.append("An earlier summary exists. Update it with the new messages below: keep what is "
                     "still true, fold in what happened since, and drop what is obsolete. Produce one "
                     f"summary, not a summary of a summary.\n<previous-summary>\n{previous.strip()}\n"
                     "</previous-summary>")
    if focus and focus.strip():
        parts.append(f"Focus: the user asked the summary to concentrate on: {focus.strip()}\n"
                     "Keep everything related to it in detail; compress the rest harder.")
    if latest_request:
        parts.append("For orientation, the user's latest request (kept verbatim after the summary):\n"
                     f"{cap_text(latest_request, REQUEST_CHARS * 2)[0]}")
    per = max(MIN_MESSAGE_CHARS, min(MAX_MESSAGE_CHARS, max_chars // max(1, len(middle))))
    rendered = "\n\n".join(_render(m, calls, per) for m in middle)
    rendered = cap_text(rendered, max_chars)[0]
    parts.append(f"<conversation>\n{rendered}\n</conversation>")
    return "\n\n".join(parts)


def _paths_in(arguments: str) -> list[str]:
    try:
        parsed = json.loads(arguments) if arguments else {}
    except ValueError:
        return []
    if not isinstance(parsed, dict):
        return []
    out: list[str] = []
    for key in PATH_KEYS:
        value: Any = parsed.get(key)
        values = value if isinstance(value, list) else [value]
        out.extend(v.strip() for v in values if isinstance(v, str) and v.strip())
    return out


def files_touched(messages: Sequence[Message]) -> list[str]:
    seen: dict[str, None] = {}
    for m in messages:
        for call in m.get("tool_calls") or ():
            for path in _paths_in(call["function"].get("arguments", "")):
                seen.setdefault(path, None)
    return list(seen)


def fallback_summary(middle: Sequence[Message], calls: dict[str, ToolCall], *, previous: str | None,
                     max_chars: int = 16_000) -> str:
    """A summary built from the middle without a model: requests, files, last tool outcomes; at most about
    ``max_chars``, of which the earlier summary it updates takes at most half."""
    requests = [text_of(m).strip() for m in middle if m.get("role") == "user" and text_of(m).strip()]
    outcomes: list[str] = []
    for m in middle:
        if m.get("role") == "tool":
            status = "error" if (m.get("meta") or {}).get("error") else "ok"
            outcomes.append(f"{call_label(m, calls)} -> {status}: {first_line(text_of(m))}")
    last_words = next((text_of(m).strip() for m in reversed(middle)
                       if m.get("role") == "assistant" and text_of(m).strip()), "")
    files = files_touched(middle)
    out = ["(This summary was assembled from the messages, not written by a model.)"]
    if previous:
        out.append("## Earlier summary\n" + cap_text(previous.strip(), max_chars // 2)[0])
    goal = [f"- {cap_text(r, REQUEST_CHARS)[0]}" for r in requests[-FALLBACK_REQUESTS:]]
    if len(requests) > FALLBACK_REQUESTS:
        goal.insert(0, f"- ({len(requests) - FALLBACK_REQUESTS} earlier requests omitted)")
    out.append("## Goal\nThe user's requests in this part, verbatim:\n" + ("\n".join(goal) or "- (none)"))
    out.append("## Constraints\n- (see the requests above)")
    done = [f"- {o}" for o in outcomes[-FALLBACK_OUTCOMES:]]
    if len(outcomes) > FALLBACK_OUTCOMES:
        done.insert(0, f"- ({len(outcomes) - FALLBACK_OUTCOMES} earlier tool results omitted)")
    out.append("## Done\nLast tool outcomes:\n" + ("\n".join(done) or "- (no tool calls)"))
    state = cap_text(last_words, REQUEST_CHARS)[0] if last_words else "(unknown)"
    out.append(f"## Current state\nThe assistant's last words in this part: {state}")
    out.append("## Open questions\n- (unknown; check the files before continuing)")
    listed = [f"- {p}" for p in files[:FALLBACK_FILES]]
    if len(files) > FALLBACK_FILES:
        listed.append(f"- ... and {len(files) - FALLBACK_FILES} more")
    out.append("## Relevant files\n" + ("\n".join(listed) or "- (none recorded)"))
    return cap_text("\n\n".join(out), max_chars)[0]


def summary_block(text: str, count: int) -> str:
    return (f"{marker(count)}\nThe earlier part of this conversation was compacted to save context. "
            f"Continue from this summary and the messages that follow.\n\n{text.strip()}")


def summary_message(text: str, count: int, merge_with: Message | None) -> Message:
    """The summary as a user message, merged with ``merge_with`` (a user message) when given."""
    block = summary_block(text, count)
    if merge_with is None:
        return {"role": "user", "content": block, "meta": {"summary": True, "summarized": count}}
    meta = {**(merge_with.get("meta") or {}), "summary": True, "summarized": count, "summary_chars": len(block)}
    content = merge_with.get("content")
    merged: Message = {"role": "user", "meta": meta}
    if isinstance(content, list):
        merged["content"] = [{"type": "text", "text": block}, *content]
    else:
        rest = text_of(merge_with)
        merged["content"] = f"{block}\n\n{rest}" if rest else block
    return merged


_SUMMARY_META = ("summary", "summarized", "summary_chars")


def split_summary(message: Message) -> tuple[str | None, int, Message | None]:
    """(previous summary body, messages it covered, the user message merged with it) of a summary
    message; ``(None, 0, message)`` for any other message."""
    meta = message.get("meta") or {}
    if message.get("role") != "user" or not meta.get("summary"):
        return None, 0, message
    count = int(meta.get("summarized") or 0)
    content = message.get("content")
    n = meta.get("summary_chars")
    rest: Message | None = None
    rest_meta = {k: v for k, v in meta.items() if k not in _SUMMARY_META}
    if isinstance(content, list):
        block = str(content[0].get("text", "")) if content and isinstance(content[0], dict) else ""
        if n is not None and len(content) > 1:
            rest = cast(Message, {"role": "user", "content": list(content[1:])})
    else:
        text = content or ""
        block = text[:n] if isinstance(n, int) else text
        remainder = text[n:].lstrip("\n") if isinstance(n, int) else ""
        if remainder:
            rest = cast(Message, {"role": "user", "content": remainder})
    if rest is not None and rest_meta:
        rest["meta"] = rest_meta
    body = block.split("\n\n", 1)[1] if block.startswith("[Summary of ") and "\n\n" in block else block
    return body, count, rest
