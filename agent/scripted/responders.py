"""Built-in dynamic responders: ``demo`` (a tiny deterministic agent) and ``bench`` (N tool rounds).

Both read the conversation in either wire format, so they work for OpenAI and Anthropic clients.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .replies import RecordedRequest, Reply, Responder, call, text, text_of, tools

_CREATE = re.compile(r"\bcreate\s+(\S+)\s+containing\s+(.+)", re.IGNORECASE | re.DOTALL)
_TOKEN = re.compile(r"[^\s│├└─|`*'\",;()\[\]]+")


@dataclass
class ToolResult:
    name: str
    arguments: dict[str, Any]
    output: str


def trailing_tool_results(req: RecordedRequest) -> list[ToolResult] | None:
    """The tool results that end the conversation (with their calls), or None if it ends otherwise."""
    msgs = req.messages
    if not msgs:
        return None
    if req.wire == "openai":
        end = len(msgs)
        start = end
        while start > 0 and msgs[start - 1].get("role") == "tool":
            start -= 1
        if start == end or start == 0:
            return None
        calls = {tc.get("id"): tc.get("function") or {} for tc in msgs[start - 1].get("tool_calls") or []
                 if isinstance(tc, dict)}
        out = []
        for m in msgs[start:]:
            fn = calls.get(m.get("tool_call_id"), {})
            out.append(ToolResult(str(fn.get("name", "")), _args(fn.get("arguments")), text_of(m.get("content"))))
        return out
    last = msgs[-1]
    blocks = last.get("content") if last.get("role") == "user" else None
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"] \
        if isinstance(blocks, list) else []
    if not results:
        return None
    prev = msgs[-2].get("content") if len(msgs) > 1 else None
    uses = {b.get("id"): b for b in prev if isinstance(b, dict) and b.get("type") == "tool_use"} \
        if isinstance(prev, list) else {}
    out = []
    for r in results:
        use = uses.get(r.get("tool_use_id"), {})
        inner = r.get("content", "")
        out.append(ToolResult(str(use.get("name", "")), _args(use.get("input")), text_of(inner)))
    return out


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def count_tool_results(req: RecordedRequest) -> int:
    """How many tool results the whole conversation carries."""
    if req.wire == "openai":
        return sum(1 for m in req.messages if m.get("role") == "tool")
    return sum(1 for m in req.messages if isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")


def first_file_name(listing: str) -> str | None:
    """The first plausible file name in a directory listing (directories end with '/')."""
    fallback = None
    for tok in _TOKEN.findall(listing):
        if tok.endswith(("/", ":")) or tok.startswith("-"):
            continue
        if re.fullmatch(r"[\w@+.-]*\w\.\w+", tok.split("/")[-1]):
            return str(tok)
        if fallback is None and re.fullmatch(r"[\w@+.-]+", tok) and not tok.isdigit():
            fallback = tok
    return fallback


def demo(req: RecordedRequest) -> Reply:
    """list_dir → read_file (README.md or the first file) → "Here is what I found: ...".

    A prompt ``create <name> containing <text>`` writes the file instead, then confirms.
    """
    results = trailing_tool_results(req)
    if results is None:
        last = req.messages[-1] if req.messages else {}
        if last.get("role") != "user":
            return text("Hello from the scripted demo model.")
        match = _CREATE.search(req.last_user_text or "")
        if match:
            name, content = match.group(1), match.group(2).strip()
            return tools(call("write_file", {"path": name, "content": content}))
        return tools(call("list_dir", {}))
    done = results[-1]
    if done.name == "write_file":
        return text(f"Done: created {done.arguments.get('path', 'the file')}.")
    if done.name == "list_dir":
        if done.output.lower().startswith("error"):
            return text(f"I could not list the directory: {done.output[:200]}")
        target = "README.md" if "README.md" in done.output else first_file_name(done.output)
        if target is None:
            return text("The directory looks empty.")
        return tools(call("read_file", {"path": target}))
    if done.name == "read_file":
        return text("Here is what I found: " + done.output[:300])
    return text(f"Done ({done.name or 'tools'}).")


def bench(req: RecordedRequest) -> Reply:
    """Model ``bench:<N>``: N rounds of ``read_file bench.txt``, then "done" (N defaults to 1). Each round asks
    for a different ``limit`` (the same text comes back): the loop guard stops identical calls."""
    _, _, n = req.model.partition(":")
    rounds = int(n) if n.isdigit() else 1
    done = count_tool_results(req)
    if done < rounds:
        return tools(call("read_file", {"path": "bench.txt", "limit": 2000 + done}))
    return text("done")


RESPONDERS: dict[str, Responder] = {"demo": demo, "bench": bench}


def get_responder(name: str) -> Responder:
    try:
        return RESPONDERS[name]
    except KeyError:
        raise ValueError(f"unknown responder {name!r}; choose one of {sorted(RESPONDERS)}") from None
