"""Where a compression pass may cut a transcript: head, middle, tail.

The cutting unit is a *round*: a user message alone, or an assistant message together with the
tool results that answer it. Cuts fall only between rounds, so a tool call is never separated
from its results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..types import Message

Unit = tuple[int, int]  # [start, end) message indices


@dataclass(frozen=True)
class Plan:
    """``messages[:head_end]`` and ``messages[tail_start:]`` are kept; the rest is the middle.

    ``pinned_user`` is the index of the user message kept verbatim (merged after the summary) when it lies
    in the middle: the running turn's own user message when the caller names it (``plan(pin=...)``), else
    the last user message, so the latest request always survives word for word.
    """

    head_end: int
    tail_start: int
    pinned_user: int | None = None

    def middle(self) -> list[int]:
        return [i for i in range(self.head_end, self.tail_start) if i != self.pinned_user]


def units(messages: Sequence[Message]) -> list[Unit]:
    """The rounds of a transcript, in order. Stray tool messages stick to the round before them."""
    out: list[Unit] = []
    i, n = 0, len(messages)
    while i < n:
        start = i
        role = messages[i].get("role")
        i += 1
        if role != "user":
            while i < n and messages[i].get("role") == "tool":
                i += 1
        out.append((start, i))
    return out


def head_end(messages: Sequence[Message], rounds: Sequence[Unit], tokens: Sequence[int], budget: int) -> int:
    """The end of the protected head: the system prompt if present, the first user message and
    the first round answering it, then more of the first exchange while it fits ``budget``."""
    k = 0
    end = 0
    while k < len(rounds) and messages[rounds[k][0]].get("role") == "system":
        end = rounds[k][1]
        k += 1
    if k >= len(rounds):
        return end
    if messages[rounds[k][0]].get("role") == "user":
        end = rounds[k][1]
        k += 1
    if k < len(rounds) and messages[rounds[k][0]].get("role") == "assistant":
        end = rounds[k][1]
        k += 1
    used = sum(tokens[:end])
    while k < len(rounds) and messages[rounds[k][0]].get("role") != "user":
        start, stop = rounds[k]
        cost = sum(tokens[start:stop])
        if used + cost > budget:
            break
        used += cost
        end = stop
        k += 1
    return end


def _last_index(messages: Sequence[Message], role: str, lo: int) -> int | None:
    for i in range(len(messages) - 1, lo - 1, -1):
        if messages[i].get("role") == role:
            return i
    return None


def _unit_start(rounds: Sequence[Unit], index: int) -> int:
    for start, stop in rounds:
        if start <= index < stop:
            return start
    return index


def tail_start(
    messages: Sequence[Message],
    rounds: Sequence[Unit],
    tokens: Sequence[int],
    *,
    head: int,
    budget: int,
    keep_last: int | None = None,
) -> int:
    """The start of the protected tail (never inside the head, always on a round boundary).

    By default the tail is the latest rounds that fit ``budget`` tokens, and always the round of
    the last assistant message. With ``keep_last=N`` it is the last N exchanges instead (an
    exchange starts at a user message), still at least the last assistant round.
    """
    n = len(messages)
    start = n
    if keep_last is not None:
        if keep_last > 0:
            seen = 0
            for s, _ in reversed(rounds):
                if s < head:
                    break
                if messages[s].get("role") == "user":
                    seen += 1
                    start = s
                    if seen >= keep_last:
                        break
            if seen < keep_last:
                start = head
    else:
        used = 0
        for s, e in reversed(rounds):
            if s < head:
                break
            cost = sum(tokens[s:e])
            if used + cost > budget:
                break
            used += cost
            start = s
    last_assistant = _last_index(messages, "assistant", head)
    if last_assistant is not None:
        start = min(start, _unit_start(rounds, last_assistant))
    return max(head, start)


def plan(
    messages: Sequence[Message],
    tokens: Sequence[int],
    *,
    head_budget: int,
    tail_budget: int,
    keep_last: int | None = None,
    pin: int | None = None,
) -> Plan:
    """``pin``: the running turn's user message. In the middle, it is the message kept (a steer after it
    there is summarised); it is never summarised away. The tail then never starts with a user message (a
    steer), which would follow the request merged with the summary: it starts one round earlier."""
    rounds = units(messages)
    head = head_end(messages, rounds, tokens, head_budget)
    tail = tail_start(messages, rounds, tokens, head=head, budget=tail_budget, keep_last=keep_last)
    if pin is not None and head <= pin < tail and messages[pin].get("role") == "user":
        if tail < len(messages) and messages[tail].get("role") == "user":
            tail = _unit_start(rounds, tail - 1)
        return Plan(head_end=head, tail_start=tail, pinned_user=pin if pin < tail else None)
    last_user = _last_index(messages, "user", head)
    pinned = last_user if last_user is not None and last_user < tail else None
    return Plan(head_end=head, tail_start=tail, pinned_user=pinned)


def last_tool_round_start(messages: Sequence[Message]) -> int:
    """The index of the assistant message whose tool results are the very last round's."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "assistant" and messages[i].get("tool_calls"):
            return i
    return len(messages)
