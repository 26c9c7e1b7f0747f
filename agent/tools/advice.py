"""Concrete next steps for a model whose edit was refused: old_strings it can copy as they are.

A small model told "include more surrounding lines" or "include everything that must remain" sends the
same call again. Told the exact text to send, it copies it. Each helper returns a short paragraph for the
tool result, or None when it has nothing certain to offer.
"""

from __future__ import annotations

import json
import re

from agentls.agent.tools.matching import Span, line_of

MAX_CHOICES = 6
DONE = ("[This change is made: do not make it again. If the user asked for more, make the next change; "
        "otherwise stop calling tools and answer: say what you changed.]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole lines around ``text[start:end]``."""
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", end)
    return first, len(text) if last < 0 else last


def unique_choices(text: str, spans: tuple[Span, ...]) -> str | None:
    """For an ambiguous old_string: each place as whole lines with the lines above it, grown until the text is
    unique in the file, so the model can pick the one the user meant."""
    choices = []
    for span in spans[:MAX_CHOICES]:
        first, last = _line_bounds(text, span.start, span.end)
        for _ in range(4):
            candidate = text[first:last]
            if text.count(candidate) == 1:
                break
            if first == 0:
                candidate = ""
                break
            first = text.rfind("\n", 0, first - 1) + 1
        if candidate:
            choices.append(f"- line {line_of(text, span.start)}: old_string {_quoted(candidate)}")
    if not choices:
        return None
    return ("Each place, with enough lines to be unique (copy the one the user meant as old_string, and put the "
            "same lines with your change in new_string):\n" + "\n".join(choices))


def syntax_choices(text: str, old: str, new: str, spans: tuple[Span, ...]) -> str | None:
    """For an edit that would break the syntax: the line as it is and as it would read; and when ``old`` is the
    name assigned on that line (``TIMEOUT = 10`` with old_string ``TIMEOUT``), the edit that sets its value."""
    if len(spans) != 1:
        return None
    span = spans[0]
    first, last = _line_bounds(text, span.start, span.end)
    before = text[first:last]
    after = text[first:span.start] + new + text[span.end:last]
    out = f"Line {line_of(text, span.start)} now reads {_quoted(before)}; this edit would make it {_quoted(after)}."
    stripped = before.strip()
    if _NAME.fullmatch(old) and "\n" not in before and re.match(rf"\s*{re.escape(old)}\s*=[^=]", before) \
            and "\n" not in new and new.strip() and stripped.startswith(old):
        indent = before[: len(before) - len(before.lstrip())]
        target = f"{indent}{old} = {new.strip()}"
        out += (f" To set {old} to {new.strip()}, send old_string {_quoted(before)} and new_string "
                f"{_quoted(target)}.")
    return out


def anchor_choice(old: str, new: str) -> str | None:
    """For a write_file that would drop most of a file: how to make the change with edit_file instead, anchored
    on the first line of the model's content that the file already has."""
    existing = {line.strip(): line for line in old.split("\n") if line.strip()}
    for line in new.split("\n"):
        if line.strip() in existing:
            anchor = existing[line.strip()]
            if old.count(anchor) == 1:
                return (f"To add lines after {_quoted(anchor)}, call edit_file with old_string {_quoted(anchor)} and "
                        f"new_string {_quoted(anchor + chr(10))} followed by the lines the user asked for.")
    return None


def block_choice(text: str, old: str) -> str | None:
    """For an old_string that names something (``sub``) rather than quoting the text to change: the block where
    it first stands (its line and the more indented lines under it, at most ``MAX_BLOCK`` lines), to copy."""
    at = text.find(old) if old.strip() else -1
    if at < 0:
        return None
    first, last = _line_bounds(text, at, at + len(old))
    head = text[first:last]
    indent = len(head) - len(head.lstrip())
    lines = [head]
    rest = text[last + 1:].split("\n") if last < len(text) else []
    for line in rest[: MAX_BLOCK - 1]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        lines.append(line)
    while lines and not lines[-1].strip():
        lines.pop()
    block = "\n".join(lines)
    return (f"{_quoted(old)} is at line {line_of(text, at)}. To change that part, copy it as old_string, "
            f"{_quoted(block)}, and send the same text with your change as new_string.")


MAX_BLOCK = 8
