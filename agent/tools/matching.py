"""Where ``edit_file``'s ``old_string`` is in a file when a small model did not copy it exactly: the exact
text first, then the looser readings of docs/loop.md §9.7, each saying how it matched. Pure functions of
the text: no I/O."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

QUOTES = "\"'`\u2018\u2019\u201c\u201d"
_QUOTE_CLASS = "[" + re.escape(QUOTES) + "]"
_NUMBERED = re.compile(r"^ {0,8}\d{1,7}\t", re.MULTILINE)
_TOKEN = re.compile(r"\w+|\s+|.", re.DOTALL)
PLACEHOLDERS = frozenset({"old_string", "new_string", "<old_string>", "<new_string>", "...", "old", "new",
                          "string", "text", "exact text", "the exact text to replace", "the text to replace"})


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    replacement: str


@dataclass(frozen=True)
class Found:
    spans: tuple[Span, ...]  # where, in file order, with what each is replaced
    how: str | None  # None: exact; else how the text was matched, for the tool result


class NotFound(Exception):
    pass


def placeholder_echo(old_string: str, new_string: str) -> str | None:
    """A message when the model sent a schema placeholder (``"old_string"``) instead of real text."""
    for name, value in (("old_string", old_string), ("new_string", new_string)):
        if value.strip().lower() in PLACEHOLDERS and value.strip() != "":
            return (f"{name} is the placeholder text {value.strip()!r}, not text from the file. Put the exact "
                    "lines you want to change in old_string (copy them from read_file's output, without the line "
                    "numbers) and the lines that should replace them in new_string.")
    return None


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _first_indent(lines: list[str]) -> str:
    return next((_indent(line) for line in lines if line.strip()), "")


def _reindent(new: str, old_indent: str, file_indent: str) -> str:
    if old_indent == file_indent:
        return new
    out = []
    for line in new.split("\n"):
        if not line.strip():
            out.append(line)
        elif line.startswith(old_indent):
            out.append(file_indent + line[len(old_indent):])
        else:
            out.append(file_indent + line.lstrip(" \t"))
    return "\n".join(out)


def _quote_map(model_text: str, file_text: str) -> dict[str, str]:
    """How the model's quotes map to the file's, when the two texts align character for character."""
    mapping: dict[str, str] = {}
    if len(model_text) != len(file_text):
        return mapping
    for a, b in zip(model_text, file_text, strict=True):
        if a != b and a in QUOTES and b in QUOTES:
            if mapping.get(a, b) != b:
                return {}
            mapping[a] = b
    return mapping


def _apply_quotes(text: str, mapping: dict[str, str]) -> str:
    return "".join(mapping.get(c, c) for c in text) if mapping else text


def _norm_quotes(s: str) -> str:
    return re.sub(_QUOTE_CLASS, '"', s)


def _whole_lines(text: str, old: str, new: str, key: Callable[[str], str], quotes: bool) -> list[Span]:
    """Windows of whole lines of ``text`` equal to ``old``'s lines under ``key``."""
    old_lines = old.strip("\n").split("\n")
    if not any(line.strip() for line in old_lines):
        return []
    file_lines = text.split("\n")
    starts = _line_starts(text)
    want = [key(line) for line in old_lines]
    keyed = [key(line) for line in file_lines]
    n = len(old_lines)
    spans: list[Span] = []
    new_core = new.strip("\n") if old.endswith("\n") or old.startswith("\n") else new
    for i in range(0, len(file_lines) - n + 1):
        if keyed[i:i + n] != want:
            continue
        window = file_lines[i:i + n]
        start = starts[i]
        end = starts[i] + len("\n".join(window))
        replacement = _reindent(new_core, _first_indent(old_lines), _first_indent(window))
        if quotes:
            mapping = _quote_map("\n".join(x.strip() for x in old_lines), "\n".join(x.strip() for x in window))
            replacement = _apply_quotes(replacement, mapping)
        if replacement == "" and end < len(text):
            end += 1  # deleting whole lines takes their line break with them
        spans.append(Span(start, end, replacement))
    return spans


def _fragment_regex(old: str) -> re.Pattern[str] | None:
    """``old`` as a regex that ignores quote style and the spacing between tokens (never inside a word)."""
    core = old.strip()
    if not core:
        return None
    parts: list[str] = []
    tokens = _TOKEN.findall(core)
    for i, tok in enumerate(tokens):
        if tok.isspace():
            prev, nxt = tokens[i - 1] if i else "", tokens[i + 1] if i + 1 < len(tokens) else ""
            both_words = prev[-1:].isalnum() or prev[-1:] == "_"
            both_words = both_words and (nxt[:1].isalnum() or nxt[:1] == "_")
            parts.append(r"\s+" if both_words else r"\s*")
            continue
        if parts and not parts[-1].startswith(r"\s"):
            prev = tokens[i - 1]
            if not (prev[-1:].isalnum() and tok[:1].isalnum()):
                parts.append(r"[ \t]*")
        parts.append(_QUOTE_CLASS if tok in QUOTES else re.escape(tok))
    try:
        return re.compile("".join(parts))
    except re.error:
        return None


def _fragments(text: str, old: str, new: str) -> list[Span]:
    regex = _fragment_regex(old)
    if regex is None:
        return []
    lead = old[: len(old) - len(old.lstrip())]
    trail = old[len(old.rstrip()):]
    core_new = new
    if lead and core_new.startswith(lead):
        core_new = core_new[len(lead):]
    if trail and core_new.endswith(trail):
        core_new = core_new[: len(core_new) - len(trail)]
    spans = []
    for m in regex.finditer(text):
        if m.end() == m.start():
            continue
        # Each quote of old_string matched one quote of the file, in order: that is the mapping.
        mapping = _quote_map(_quotes_in(old), _quotes_in(m.group(0)))
        spans.append(Span(m.start(), m.end(), _apply_quotes(core_new, mapping)))
    return spans


def _quotes_in(s: str) -> str:
    return "".join(c for c in s if c in QUOTES)


def without_line_numbers(old: str) -> str | None:
    lines = [line for line in old.split("\n") if line.strip()]
    if lines and all(_NUMBERED.match(line) for line in lines):
        return _NUMBERED.sub("", old)
    return None


def find(text: str, old: str, new: str) -> Found:
    """Every place ``old`` is in ``text`` under the first reading that finds it. Raises NotFound."""
    count = text.count(old) if old else 0
    if count:
        spans, at = [], text.find(old)
        while at >= 0:
            spans.append(Span(at, at + len(old), new))
            at = text.find(old, at + len(old))
        return Found(tuple(spans), None)
    stripped = without_line_numbers(old)
    if stripped is not None and stripped.strip():
        new_stripped = without_line_numbers(new)
        inner = find(text, stripped, new_stripped if new_stripped is not None else new)
        how = "without the line numbers copied from read_file"
        return Found(inner.spans, how + (f", {inner.how}" if inner.how else ""))
    readings: list[tuple[str, Callable[[], list[Span]]]] = [
        ("ignoring indentation and trailing whitespace",
         lambda: _whole_lines(text, old, new, str.strip, quotes=False)),
        ("ignoring indentation and quote style",
         lambda: _whole_lines(text, old, new, lambda s: _norm_quotes(s.strip()), quotes=True)),
        ("ignoring quote style and spacing", lambda: _fragments(text, old, new)),
    ]
    for how, attempt in readings:
        spans = attempt()
        if spans:
            return Found(tuple(spans), how)
    raise NotFound()


def apply(text: str, spans: tuple[Span, ...]) -> str:
    out, pos = [], 0
    for span in spans:
        out.append(text[pos:span.start])
        out.append(span.replacement)
        pos = span.end
    out.append(text[pos:])
    return "".join(out)
