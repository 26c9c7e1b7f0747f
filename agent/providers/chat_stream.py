"""Chat-completions chunks as the real servers send them, folded into one answer.

Every OpenAI-compatible server bends the format somewhere, so nothing here trusts a shape:
- ``content`` is a string, or an array of typed parts (Mistral: ``text`` parts and ``thinking`` parts whose
  ``thinking`` is itself an array of text parts, or a string);
- reasoning arrives as ``reasoning_content`` (DeepSeek, xAI, Qwen, vLLM) or ``reasoning`` (OpenRouter,
  Ollama); both may be present in one delta, carrying the same text;
- a tool-call delta may lack ``index`` (Mistral sends whole calls that way), repeat the name, carry
  arguments as an object, or come in an empty ``tool_calls`` array;
- chunks may have no ``choices`` (Azure's first chunk, usage chunks), and any object may carry fields
  nobody documented.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

REASONING_FIELDS = ("reasoning_content", "reasoning")


@dataclass
class _Slot:
    id: str = ""
    name: str = ""
    args: list[str] = field(default_factory=list)


def _text_of_parts(value: Any) -> str:
    """The text of a string, or of an array of text parts (or plain strings)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return ""
    out = []
    for part in value:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return "".join(out)


def split_content(content: Any) -> tuple[str, str]:
    """``(answer text, thinking text)`` of a ``content`` value: a string or an array of typed parts."""
    if isinstance(content, str):
        return content, ""
    if not isinstance(content, list):
        return "", ""
    text: list[str] = []
    thinking: list[str] = []
    for part in content:
        if isinstance(part, str):
            text.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("thinking", "reasoning"):
            thinking.append(_text_of_parts(part.get("thinking", part.get("reasoning", part.get("text")))))
        elif kind in (None, "text", "output_text") and isinstance(part.get("text"), str):
            text.append(part["text"])
    return "".join(text), "".join(thinking)


@dataclass
class ChatStream:
    """Accumulates chunks; ``feed`` returns the pieces to show, in order: ``("text" | "reasoning", str)``."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    # The reasoning field the server used and its text, kept so it can be sent back (docs/providers.md).
    reasoning_fields: dict[str, list[str]] = field(default_factory=dict)
    finish: str | None = None
    usage: dict[str, Any] | None = None
    _slots: list[_Slot] = field(default_factory=list)
    _by_index: dict[int, _Slot] = field(default_factory=dict)

    def feed(self, chunk: dict[str, Any]) -> list[tuple[str, str]]:
        shown: list[tuple[str, str]] = []
        usage = chunk.get("usage")
        if isinstance(usage, dict) and usage:
            self.usage = usage
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return shown
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                continue  # n > 1 is never requested: a second choice is not ours
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                delta = choice.get("message")
            self._delta(delta if isinstance(delta, dict) else {}, shown)
            if isinstance(choice.get("finish_reason"), str) and choice["finish_reason"]:
                self.finish = choice["finish_reason"]
        return shown

    def _delta(self, delta: dict[str, Any], shown: list[tuple[str, str]]) -> None:
        thought = ""
        for name in REASONING_FIELDS:
            value = delta.get(name)
            if isinstance(value, str):
                self.reasoning_fields.setdefault(name, []).append(value)
                if value and not thought:
                    thought = value  # the same text under both names is shown once
        text, thinking = split_content(delta.get("content"))
        for piece in (thought, thinking):
            if piece:
                self.reasoning.append(piece)
                shown.append(("reasoning", piece))
        refusal = delta.get("refusal")
        for piece in (text, refusal if isinstance(refusal, str) else ""):
            if piece:
                self.text.append(piece)
                shown.append(("text", piece))
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for raw in calls:
                if isinstance(raw, dict):
                    self._call(raw)

    def _call(self, raw: dict[str, Any]) -> None:
        index = raw.get("index")
        call_id = raw.get("id") if isinstance(raw.get("id"), str) else ""
        slot: _Slot | None = None
        if isinstance(index, int) and not isinstance(index, bool):
            slot = self._by_index.get(index)
            if slot is None or (call_id and slot.id and slot.id != call_id):
                slot = self._by_index[index] = self._new()
        elif call_id:  # no index: a call is known by its id, a new id is a new call
            slot = next((s for s in self._slots if s.id == call_id), None) or self._new()
        elif self._slots:
            slot = self._slots[-1]  # a continuation fragment of the last call
        else:
            slot = self._new()
        if call_id and not slot.id:
            slot.id = call_id
        fn = raw.get("function")
        if not isinstance(fn, dict):
            return
        name = fn.get("name")
        if isinstance(name, str) and name and name != slot.name:
            slot.name = name if not slot.name else slot.name + name
        args = fn.get("arguments")
        if isinstance(args, str):
            slot.args.append(args)
        elif isinstance(args, dict | list):
            slot.args[:] = [json.dumps(args, ensure_ascii=False)]

    def _new(self) -> _Slot:
        slot = _Slot()
        self._slots.append(slot)
        return slot

    def calls(self) -> list[dict[str, Any]]:
        """The raw calls, in order, as ``{"id", "function": {"name", "arguments"}}``."""
        return [{"id": s.id, "function": {"name": s.name, "arguments": "".join(s.args)}} for s in self._slots]

    def fields(self) -> dict[str, str]:
        """The reasoning fields the server sent, each joined (present even when empty)."""
        return {name: "".join(parts) for name, parts in self.reasoning_fields.items()}
