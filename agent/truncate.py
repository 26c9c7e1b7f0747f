"""Head+tail caps with a marker that says how much was cut."""

from __future__ import annotations


def cap_text(text: str, limit: int, *, what: str = "characters") -> tuple[str, int]:
    """``text`` cut to at most about ``limit`` chars, keeping the head and the tail.

    Returns the capped text and how many characters were removed (0 when it fit).
    """
    if limit <= 0 or len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    head = limit * 2 // 3
    tail = limit - head
    marker = f"\n\n[... {cut} {what} omitted ...]\n\n"
    return text[:head] + marker + text[len(text) - tail:], cut
