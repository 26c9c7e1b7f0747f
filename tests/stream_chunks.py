"""The message and thought chunks a client saw, numbered by message (tests of retried streams, docs/loop.md §4.2)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

CHUNKS = ("agent_message_chunk", "agent_thought_chunk")
Shown = list[tuple[str, str, int, int | None]]


def shown_chunks(updates: Iterable[dict[str, Any]]) -> Shown:
    """The chunks as ``(kind, text, message number, number of the message it replaces)``."""
    ids: list[str] = []
    out: Shown = []
    for u in updates:
        if u["sessionUpdate"] not in CHUNKS:
            continue
        if u["messageId"] not in ids:
            ids.append(u["messageId"])
        replaces = (u.get("_meta") or {}).get("agentls", {}).get("replaces")
        kind = "text" if u["sessionUpdate"] == "agent_message_chunk" else "thought"
        out.append((kind, u["content"]["text"], ids.index(u["messageId"]),
                    None if replaces is None else ids.index(replaces)))
    return out
