"""An assistant message sent back in the order the provider first wrote its parts (reasoning, text, tool
calls), from the layout it stored in ``provider_data``: the same walk for Anthropic blocks and Responses items."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from ..types import ToolCall


@dataclass(frozen=True)
class Kinds:
    reasoning: Collection[str]  # the layout's reasoning entries
    text: str  # the entry that marks where the text goes
    call: str  # a tool call entry, naming its call by ``call_id``
    call_id: str
    send_reasoning: Callable[[Any], dict[str, Any] | None]  # a stored reasoning entry as sent back (None: dropped)
    send_call: Callable[[ToolCall], dict[str, Any]]


def in_stored_order(layout: Any, calls: list[ToolCall], text: list[dict[str, Any]], kinds: Kinds) -> list[dict[str, Any]]:
    """Reasoning in place, ``text`` where the layout had it (else before the first call), each call once; calls
    the layout does not name go last."""
    out: list[dict[str, Any]] = []
    by_id = {c["id"]: c for c in calls}
    placed: set[str] = set()
    text_at: int | None = None
    for entry in layout if isinstance(layout, list) else []:
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind in kinds.reasoning:
            sent = kinds.send_reasoning(entry)
            if sent is not None:
                out.append(sent)
        elif kind == kinds.text and text_at is None:
            text_at = len(out)
        elif kind == kinds.call and entry.get(kinds.call_id) in by_id and entry[kinds.call_id] not in placed:
            placed.add(entry[kinds.call_id])
            out.append(kinds.send_call(by_id[entry[kinds.call_id]]))
    if text:
        if text_at is None:  # text the model did not write as a part (a joined continuation): before the calls
            text_at = next((i for i, b in enumerate(out) if b["type"] == kinds.call), len(out))
        out[text_at:text_at] = text
    out.extend(kinds.send_call(c) for c in calls if c["id"] not in placed)
    return out
