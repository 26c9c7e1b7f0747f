"""Concrete next steps for a model whose edit was refused: old_strings it can copy as they are.

A small model told "include more surrounding lines" or "include everything that must remain" sends the
same call again. Told the exact text to send, it copies it. Each helper returns a short paragraph for the
tool result, or None when it has nothing certain to offer.
"""

from __future__ import annotations

import json
import re

from .matching import Span, line_of

MAX_CHOICES = 6
# What a small model echoes from its chat template instead of file content (Qwen's, ChatML's).
TEMPLATE_MARKS = ("<tool_response>", "</tool_response>", "<tool_call>", "</tool_call>", "<|im_start|>",
                  "<|im_end|>", "<|endoftext|>")
DONE = ("[Done: do not make this change again. If the request asks for more, make the next change; otherwise "
        "stop calling tools and tell the user what you changed.]")
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
    value = new.strip()
    if _NAME.fullmatch(old) and "\n" not in before and re.match(rf"\s*{re.escape(old)}\s*=[^=]", before) \
            and value and "\n" not in value and "=" not in value and value != old and stripped.startswith(old):
        indent = before[: len(before) - len(before.lstrip())]
        target = f"{indent}{old} = {new.strip()}"
        out += (f" To set {old} to {new.strip()}, send old_string {_quoted(before)} and new_string "
                f"{_quoted(target)}.")
    return out


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


MAX_REGION = 30  # lines of a suggested edit_file call
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def template_echo(text: str) -> str | None:
    """The refusal for content that carries the model's chat-template tags (a small model's echo, not code)."""
    mark = next((m for m in TEMPLATE_MARKS if m in text), None)
    if mark is None:
        return None
    return (f"the content holds {mark!r}, a tag of the conversation's format, not text for the file; nothing "
            "was written. Send the file's real text.")


def region_choice(old: str, new: str) -> str | None:
    """For a write_file that sent part of a file: the edit_file call that puts that part in place. The part
    replaces the lines of the file from the first to the last of its lines the file already has; a part
    that shares no line with the file goes after the file's last line."""
    old_lines, new_body = old.split("\n"), new.strip("\n")
    new_lines = new_body.split("\n")
    if not new_body.strip() or len(new_lines) > MAX_REGION:
        return None
    where = {line.strip(): n for n, line in reversed(list(enumerate(old_lines))) if line.strip()}
    hits = [(k, where[line.strip()]) for k, line in enumerate(new_lines) if line.strip() in where]
    if hits and hits[-1][1] - hits[0][1] < MAX_REGION:
        # Lines sent before the first known one and after the last replace as many lines of the file there.
        start = max(0, hits[0][1] - hits[0][0])
        end = min(len(old_lines) - 1, hits[-1][1] + (len(new_lines) - 1 - hits[-1][0]))
        while end > start and not old_lines[end].strip():
            end -= 1
        region = "\n".join(old_lines[start: end + 1])
        if region == new_body or old.count(region) != 1:
            return None
        return (f"To put these lines in place instead, call edit_file with old_string {_quoted(region)} and "
                f"new_string {_quoted(new_body)}.")
    last = next((line for line in reversed(old_lines) if line.strip()), None)
    if last is None or old.count(last) != 1:
        return None
    return (f"To add these lines at the end of the file instead, call edit_file with old_string {_quoted(last)} "
            f"and new_string {_quoted(last + chr(10) + new_body)}.")


def still_used(old_string: str, new_string: str, text: str) -> str | None:
    """After an edit that renamed something (a name in old_string that new_string no longer has): where the
    old name is still used in the file, so the model can finish the rename."""
    gone = set(_IDENT.findall(old_string)) - set(_IDENT.findall(new_string))
    notes = []
    for name in sorted(gone):
        lines = [(n, line) for n, line in enumerate(text.split("\n"), start=1)
                 if re.search(rf"\b{re.escape(name)}\b", line)]
        if lines:
            shown = "; ".join(f"line {n}: {_quoted(line.strip())}" for n, line in lines[:5])
            notes.append(f"{_quoted(name)} is still used at {shown}")
    return ("[" + "; ".join(notes) + ". If the user asked to rename it everywhere, change those too.]") if notes \
        else None
