"""Each line keeps its own ending (docs/reliability.md "Writes"). Files are read with universal newlines
(``fileio.decode_text``), so a tool's new text has ``\\n`` everywhere; before it is written over a file
whose lines end in ``\\r\\n`` or a lone ``\\r`` (or a mix of the three), every line that is kept gets its
old ending back, a line edited in place keeps the ending it had, and a new line takes the ending of the
line before it. Only the edited lines change, as the diff says."""

from __future__ import annotations

import difflib
import re

_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n)")


def split(text: str) -> tuple[list[str], list[str]]:
    """``text``'s lines and their endings (the last ending is ``""`` when the text does not end in one)."""
    lines, endings = [], []
    end = 0
    for match in _LINE.finditer(text):
        lines.append(match.group(1))
        endings.append(match.group(2))
        end = match.end()
    if end < len(text):
        lines.append(text[end:])
        endings.append("")
    return lines, endings


def _common(endings: list[str]) -> str:
    real = [e for e in endings if e]
    return max(("\r\n", "\n", "\r"), key=real.count) if real else "\n"


def restore(old: str, new: str) -> str:
    """``new`` (``\\n`` endings) with the endings of ``old`` (any endings) put back line by line."""
    if "\r" not in old or "\r" in new:
        return new
    old_lines, old_endings = split(old)
    new_lines, new_endings = split(new)
    fallback = _common(old_endings)
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k, j in enumerate(range(j1, j2)):
            if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
                ending = old_endings[i1 + k] or fallback
            else:  # inserted: like the line before it
                ending = (old_endings[i1 - 1] if i1 > 0 else old_endings[0] if old_endings else "") or fallback
            out.append(new_lines[j] + (ending if new_endings[j] else ""))
    return "".join(out)
