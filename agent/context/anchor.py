"""The running turn's user message, found again after a rewrite of the transcript (docs/loop.md §7).

A compression (or a repair) builds a new list: messages move, are copied, or are merged into a summary, so
an index or an object taken before it means nothing after it. Before the rewrite the message is marked (a
transient ``meta`` key, on a copy); after it, the message carrying the mark is the turn's user message (or
the summary it was merged into), and the mark is taken off again. The mark never reaches a request or the
store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from ..types import Message

MARK = "turn_request"


def mark(messages: Sequence[Message], at: int | None) -> tuple[list[Message], int | None]:
    """A copy of ``messages`` with the user message at ``at`` marked; ``at`` itself, or None when it names
    no user message."""
    out = list(messages)
    if at is None or not 0 <= at < len(out) or out[at].get("role") != "user":
        return out, None
    out[at] = cast(Message, {**out[at], "meta": {**(out[at].get("meta") or {}), MARK: True}})
    return out, at


def take(messages: Sequence[Message]) -> tuple[list[Message], int | None]:
    """``messages`` with the mark taken off, and the index of the message that carried it (None if none)."""
    out = list(messages)
    found: int | None = None
    for i, message in enumerate(out):
        meta = message.get("meta") or {}
        if MARK not in meta:
            continue
        rest = {k: v for k, v in meta.items() if k != MARK}
        copy = cast(Message, {k: v for k, v in message.items() if k != "meta"})
        if rest:
            copy["meta"] = rest
        out[i] = copy
        found = i if found is None else found
    return out, found


def last_user(messages: Sequence[Message]) -> int | None:
    """The last user message: where a lost mark falls back to (never expected: the compressor pins it)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return None
