"""``write_file`` over an existing file: keep what the model did not mean to change (line endings, lines that
differ only in quotes or trailing spaces) and refuse a write that looks like a fragment. The rules are in
docs/loop.md §9.1 and §9.7."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

_QUOTES = re.compile("[\"'`\u2018\u2019\u201c\u201d]")
MAX_DIFF_LINES = 60


@dataclass
class Merged:
    text: str
    notes: list[str] = field(default_factory=list)
    fragment: str | None = None  # set when the write looks like a fragment: why it is refused


def _key(line: str) -> str:
    return _QUOTES.sub('"', line.rstrip())


def _nonblank(lines: list[str]) -> int:
    return sum(1 for line in lines if line.strip())


def merge(old: str, new: str, *, guarded: bool = False) -> Merged:
    crlf = "\r\n" in old and "\r\n" not in new
    body = new.replace("\r\n", "\n")
    old_lines = old.replace("\r\n", "\n").split("\n")
    new_lines = body.split("\n")
    notes: list[str] = []
    matcher = difflib.SequenceMatcher(None, [_key(x) for x in old_lines], [_key(x) for x in new_lines],
                                      autojunk=False)
    opcodes = matcher.get_opcodes()
    cosmetic: list[tuple[int, int]] = []  # (old index, new index) of lines equal under the key only
    real_change = False
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            cosmetic.extend((i1 + k, j1 + k) for k in range(i2 - i1) if old_lines[i1 + k] != new_lines[j1 + k])
        else:
            changed = [x for x in old_lines[i1:i2] + new_lines[j1:j2] if x.strip()]
            real_change = real_change or bool(changed)
    if real_change and cosmetic:
        for i, j in cosmetic:
            new_lines[j] = old_lines[i]
        notes.append(f"kept {len(cosmetic)} line(s) as they were: they differed only in quote style or trailing "
                     "spaces (change those with edit_file if you mean to)")
    text = "\n".join(new_lines)
    if old.endswith("\n") and text and not text.endswith("\n"):
        text += "\n"
        notes.append("kept the final newline")
    elif not old.endswith("\n") and old and text.endswith("\n") and not body.endswith("\n\n"):
        text = text[:-1]
    if crlf:
        text = text.replace("\n", "\r\n")
    return Merged(text, notes, _fragment(old_lines, new_lines, guarded))


SMALL_MODEL_LOST = 3  # non-blank lines a small model's overwrite may not drop (it should use edit_file)


def _fragment(old_lines: list[str], new_lines: list[str], guarded: bool) -> str | None:
    kept = {x.strip() for x in new_lines if x.strip()}
    lost = [(n, x) for n, x in enumerate(old_lines, start=1) if x.strip() and x.strip() not in kept]
    before, after = _nonblank(old_lines), _nonblank(new_lines)
    looks_cut = len(lost) >= 2 and 2 * len(lost) > before and 2 * after < before
    if not looks_cut and not (guarded and len(lost) >= SMALL_MODEL_LOST):
        return None
    first, last = lost[0][0], lost[-1][0]
    return (f"this write_file would delete {len(lost)} of the file's {before} non-blank lines (between lines "
            f"{first} and {last}): write_file replaces the WHOLE file. To add or change a few lines, use edit_file "
            "(old_string: lines from the file, new_string: those lines as they should be).")

AGAIN = " To replace the file with exactly this content anyway, send the same write_file call again."


def unified(old: str, new: str, rel: str) -> str:
    """A unified diff of the change, at most ``MAX_DIFF_LINES`` lines."""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{rel}", f"b/{rel}", lineterm="", n=1))
    if old.endswith("\n") != new.endswith("\n") and lines:
        lines.append("\\ final newline " + ("added" if new.endswith("\n") else "removed"))
    if len(lines) > MAX_DIFF_LINES:
        more = len(lines) - MAX_DIFF_LINES
        lines = lines[:MAX_DIFF_LINES] + [f"[... {more} more diff lines]"]
    return "\n".join(lines)
