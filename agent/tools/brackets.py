"""Whether a rewrite's missing end was cut off or closed a block the rewrite replaced (agent/tools/described.py).

A stub ``exports.f = () => {`` / ``throw ...;`` / ``};`` rewritten as one line loses its last two lines on
purpose; putting them back, as for a reply cut short, leaves a stray ``};``. Brace languages only: a Python
file has no open bracket at a line's end, so this never applies to it."""

from __future__ import annotations


def balanced(text: str) -> bool:
    """Brackets close as they open (string contents included: a rough check, for rewrites of code)."""
    return all(text.count(a) == text.count(b) for a, b in ("()", "[]", "{}"))


def closes_a_rewritten_block(old_lines: list[str], start: int, lost: list[str], new_text: str) -> bool:
    """The lost end (``old_lines`` from ``start``) closes a bracket still open before it, and the new text's
    brackets all close: the rewrite replaced that block whole."""
    head = "".join(old_lines[:start])
    return balanced(new_text) and not balanced(head) and balanced(head + "".join(lost))
