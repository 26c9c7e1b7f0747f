"""Recorded provider streams replayed byte for byte, and what the server sent, remembered.

``replay(path)`` turns a corpus file (tests/providers/corpus) into a reply the server sends verbatim:
``.sse`` files are raw SSE bodies, ``.chunks.txt`` files hold one JSON event per line (the framing was
stripped by whoever recorded them, so it is put back: ``event: <type>`` for typed events, and the
``data: [DONE]`` end of a chat-completions stream), ``.json`` files are whole JSON bodies.

``Issued`` remembers what the model side handed out that a real API wants back unchanged: thinking
signatures and redacted-thinking data (Anthropic), ``reasoning_content`` that came with tool calls
(DeepSeek's thinking mode), encrypted reasoning items that came with function calls (Responses). The
strict server then refuses a next request that drops, merges or alters them, with the real APIs' words.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .replies import Reply

_EVENT_END = re.compile(r"\r?\n\r?\n")


def frame_chunks(text: str) -> str:
    """SSE for a file of one JSON event per line."""
    out: list[str] = []
    typed = False
    for line in text.splitlines():
        if not line.strip():
            continue
        obj = json.loads(line)
        if isinstance(obj, dict) and isinstance(obj.get("type"), str):
            typed = True
            out.append(f"event: {obj['type']}\ndata: {line}\n\n")
        else:
            out.append(f"data: {line}\n\n")
    if not typed:
        out.append("data: [DONE]\n\n")
    return "".join(out)


def replay(path: str | Path, **kw: Any) -> Reply:
    """A reply that sends the recorded body in ``path`` verbatim (``kw``: any other ``Reply`` field)."""
    name = str(path)
    text = Path(path).read_text(encoding="utf-8")
    if name.endswith(".json"):
        return Reply(recorded=text, recorded_sse=False, **kw)
    if name.endswith(".chunks.txt"):
        text = frame_chunks(text)
    return Reply(recorded=text, recorded_sse=True, **kw)


def sse_frames(text: str) -> list[bytes]:
    """A recorded SSE body as frames (one per event, its blank line kept)."""
    parts = [p for p in _EVENT_END.split(text) if p.strip()]
    return [(p + "\n\n").encode() for p in parts]


def _events(body: str, sse: bool) -> list[Any]:
    if not sse:
        try:
            return [json.loads(body)]
        except (ValueError, RecursionError):
            return []
    out: list[Any] = []
    for line in body.splitlines():
        if line.startswith("data:"):
            try:
                out.append(json.loads(line[5:].strip()))
            except (ValueError, RecursionError):  # a recording made to break parsers breaks no memory
                continue
    return out


class Issued:
    def __init__(self) -> None:
        self.signatures: dict[str, str] = {}  # thinking signature -> its thinking text
        self.redacted: set[str] = set()
        self.reasoning_content: dict[str, str] = {}  # tool call id -> the reasoning_content it came with
        self.reasoning_items: dict[str, dict[str, Any]] = {}  # call_id -> the reasoning item before it
        self.encrypted: set[str] = set()

    def learn(self, wire: str, body: str, sse: bool) -> None:
        events = [e for e in _events(body, sse) if isinstance(e, dict)]
        if wire == "anthropic":
            self._learn_anthropic(events)
        elif wire == "openai":
            self._learn_chat(events)
        else:
            self._learn_responses(events)

    def _learn_anthropic(self, events: list[dict[str, Any]]) -> None:
        blocks: dict[int, dict[str, Any]] = {}
        for ev in events:
            if ev.get("type") == "message_start" and isinstance(ev.get("message"), dict):
                ev = ev["message"]  # its content, when it carries some
            if ev.get("type") == "message" or isinstance(ev.get("content"), list):
                blocks.update(enumerate(dict(b) for b in ev.get("content") or [] if isinstance(b, dict)))
            elif ev.get("type") == "content_block_start":
                blocks[ev.get("index", len(blocks))] = dict(ev.get("content_block") or {})
            elif ev.get("type") == "content_block_delta":
                block = blocks.setdefault(ev.get("index", 0), {})
                delta = ev.get("delta") or {}
                for key in ("thinking", "signature"):
                    if isinstance(delta.get(key), str):
                        block[key] = str(block.get(key) or "") + delta[key]
        for block in blocks.values():
            if block.get("type") == "thinking" and block.get("signature"):
                self.signatures[str(block["signature"])] = str(block.get("thinking") or "")
            elif block.get("type") == "redacted_thinking" and isinstance(block.get("data"), str):
                self.redacted.add(block["data"])

    def _learn_chat(self, events: list[dict[str, Any]]) -> None:
        reasoning: list[str] = []
        seen = False
        ids: list[str] = []
        for ev in events:
            for choice in ev.get("choices") or []:
                part = (choice.get("delta") or choice.get("message") or {}) if isinstance(choice, dict) else {}
                if isinstance(part.get("reasoning_content"), str):
                    seen = True
                    reasoning.append(part["reasoning_content"])
                for call in part.get("tool_calls") or []:
                    if isinstance(call, dict) and isinstance(call.get("id"), str) and call["id"]:
                        ids.append(call["id"])
        if seen:
            for call_id in ids:
                self.reasoning_content[call_id] = "".join(reasoning)

    def _learn_responses(self, events: list[dict[str, Any]]) -> None:
        items: list[dict[str, Any]] = []
        for ev in events:
            if ev.get("type") == "response.output_item.done" and isinstance(ev.get("item"), dict):
                items.append(ev["item"])
            elif ev.get("object") == "response" and not items:
                items = [i for i in ev.get("output") or [] if isinstance(i, dict)]
        last: dict[str, Any] | None = None
        for item in items:
            if item.get("type") == "reasoning" and isinstance(item.get("encrypted_content"), str):
                last = item
                self.encrypted.add(item["encrypted_content"])
            elif item.get("type") == "function_call" and last is not None:
                self.reasoning_items[str(item.get("call_id"))] = last

    # ------------------------------------------------------------ checks
    def check(self, wire: str, body: dict[str, Any], model: str) -> str | None:
        if wire == "anthropic":
            return self._check_anthropic(body)
        if wire == "openai":
            return self._check_chat(body, model)
        return self._check_responses(body)

    def _check_chat(self, body: dict[str, Any], model: str) -> str | None:
        strict_fields = any(name in model.lower() for name in ("mistral", "magistral", "codestral", "devstral"))
        for i, m in enumerate(body.get("messages") or []):
            if not isinstance(m, dict) or m.get("role") != "assistant":
                continue
            if strict_fields and "reasoning_content" in m:
                return f"messages[{i}].reasoning_content: Extra inputs are not permitted"
            for call in m.get("tool_calls") or []:
                want = self.reasoning_content.get(str(call.get("id"))) if isinstance(call, dict) else None
                if want is None:
                    continue
                if "reasoning_content" not in m:
                    return (f"Missing `reasoning_content` field in the assistant message at message index {i}. "
                            "The `reasoning_content` in the thinking mode must be passed back to the API.")
                if m["reasoning_content"] != want:
                    return f"messages[{i}].reasoning_content differs from what the model wrote"
        return None

    def _check_anthropic(self, body: dict[str, Any]) -> str | None:
        msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        for i, m in enumerate(msgs):
            if m.get("role") != "assistant" or not isinstance(m.get("content"), list):
                continue
            for j, b in enumerate(m["content"]):
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "thinking" and self.signatures.get(str(b.get("signature"))) != b.get("thinking"):
                    return f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
                if b.get("type") == "redacted_thinking" and b.get("data") not in self.redacted:
                    return f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block"
        thinking = body.get("thinking")
        if isinstance(thinking, dict) and thinking.get("type") == "enabled" and len(msgs) >= 2:
            last, prev = msgs[-1], msgs[-2]
            answers = isinstance(last.get("content"), list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in last["content"])
            content = prev.get("content")
            first = content[0] if isinstance(content, list) and content and isinstance(content[0], dict) else {}
            if answers and first.get("type") not in ("thinking", "redacted_thinking"):
                return (f"messages.{len(msgs) - 2}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
                        f"found `{first.get('type')}`. When `thinking` is enabled, a final `assistant` message must "
                        "start with a thinking block.")
        return None

    def _check_responses(self, body: dict[str, Any]) -> str | None:
        items = body.get("input")
        if isinstance(items, str):
            return None
        if not isinstance(items, list):
            return "input: must be a string or an array of items"
        stateless = body.get("store") is False
        seen_reasoning: dict[str, str] = {}
        calls: list[str] = []
        answered: set[str] = set()
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                return f"input[{i}]: must be an object"
            kind = item.get("type") or ("message" if "role" in item else None)
            if stateless and kind in ("message", "function_call") and item.get("id"):
                return (f"Item with id '{item['id']}' not found. Items are not persisted when `store` is set to "
                        "false. Try again with `store` set to true, or remove this item from your input.")
            if kind == "reasoning":
                enc = item.get("encrypted_content")
                if stateless and enc not in self.encrypted:
                    return f"input[{i}]: the encrypted content for item {item.get('id')} could not be verified."
                seen_reasoning[str(item.get("id"))] = str(enc)
            elif kind == "function_call":
                call_id = item.get("call_id")
                if not isinstance(call_id, str) or not isinstance(item.get("arguments"), str) or not item.get("name"):
                    return f"input[{i}]: a function_call needs call_id, name and arguments (a string)"
                need = self.reasoning_items.get(call_id)
                if need is not None and seen_reasoning.get(str(need.get("id"))) != need.get("encrypted_content"):
                    return (f"Item '{call_id}' of type 'function_call' was provided without its required "
                            f"'reasoning' item: '{need.get('id')}'.")
                calls.append(call_id)
            elif kind == "function_call_output":
                if item.get("call_id") not in calls:
                    return f"No tool call found for function call output with call_id {item.get('call_id')}."
                answered.add(str(item["call_id"]))
        missing = [c for c in calls if c not in answered]
        if missing:
            return f"No tool output found for function call {missing[0]}."
        return None
