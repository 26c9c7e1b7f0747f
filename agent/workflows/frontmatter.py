"""YAML front matter (``---`` ... ``---`` at the top of a Markdown file), read safely (docs/workflows.md).

Only a mapping of plain values is accepted: anchors and aliases are refused outright (a "billion laughs"
document is rejected before it is built), and the block is capped in size. Every scalar is read as its text
(YAML's base schema: no dates, numbers or booleans to convert, so ``description: 2001-02-30`` is that text).
A text field written on one line (``argument-hint: [message]``, ``argument-hint: [pr-number] [priority]``, as
Claude Code's own examples have them) is its raw text when YAML reads it as a list, or cannot read it at all.
Every parse failure is one ``BadFrontMatter`` (agent/data_files.py).
"""

from __future__ import annotations

import datetime
import json
import re
from typing import Any

import yaml

from ..data_files import BadData, parsed

MAX_FRONT_MATTER = 16 * 1024
MAX_NESTING = 32  # brackets deep: PyYAML's time grows with the square of it
_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)  # libyaml when it is there; every scalar a string
TEXT_FIELDS = frozenset({"name", "description", "argument-hint", "model", "license"})
_TOOL = re.compile(r"[^\s,()]+(?:\([^)]*\))?")
_RAW_LINE = re.compile(r"^(?P<key>[A-Za-z0-9_-]+)[ \t]*:[ \t]+(?P<value>\S.*?)[ \t]*$", re.MULTILINE)


class BadFrontMatter(BadData):
    """The front matter is not a small YAML mapping; the message says what is wrong."""


def split(text: str) -> tuple[dict[str, Any], str]:
    """``(fields, body)``. A file without front matter is all body. ``BadFrontMatter`` for a bad block."""
    text = text.lstrip("\ufeff")
    if not text.startswith("---"):
        return {}, text
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].strip() != "---":
        return {}, text
    end = _closing(text, first_nl + 1)
    if end is None:
        raise BadFrontMatter("the front matter opened with '---' is never closed by a '---' line")
    block, body_at = end
    return parse(text[first_nl + 1:block]), text[body_at:]


def _closing(text: str, start: int) -> tuple[int, int] | None:
    """Where the closing ``---`` line starts and where the body after it begins."""
    at = start
    while at <= len(text):
        nl = text.find("\n", at)
        line = text[at:] if nl < 0 else text[at:nl]
        if line.rstrip() in ("---", "..."):
            return at, len(text) if nl < 0 else nl + 1
        if nl < 0:
            return None
        at = nl + 1
    return None


def parse(block: str) -> dict[str, Any]:
    if len(block.encode("utf-8", "replace")) > MAX_FRONT_MATTER:
        raise BadFrontMatter(f"the front matter is over {MAX_FRONT_MATTER // 1024} KB")
    if _nesting(block) > MAX_NESTING:
        raise BadFrontMatter(f"the front matter is nested more than {MAX_NESTING} brackets deep")
    raw = _raw_text_fields(block)
    try:
        data = _load(block)
    except BadData as first:
        quoted = _RAW_LINE.sub(lambda m: f"{m['key']}: {json.dumps(raw[m['key']])}" if m["key"] in raw else m[0], block)
        if quoted == block:
            raise first from None
        try:  # the text fields written as plain text that YAML cannot read ("[a] [b]"), quoted
            data = _load(quoted)
        except BadData:
            raise first from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BadFrontMatter(f"the front matter must be a mapping of fields, not {type(data).__name__}")
    fields = {str(k): v for k, v in data.items()}
    for key, text in raw.items():
        if key in fields and not isinstance(fields[key], str):  # "[message]": a flow list to YAML, text to us
            fields[key] = text
    return fields


def _load(block: str) -> Any:
    def load() -> Any:
        for event in yaml.parse(block, Loader=_LOADER):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise BadFrontMatter("the front matter uses YAML anchors or aliases, which are not accepted")
        return yaml.load(block, Loader=_LOADER)  # the base schema: strings, lists and mappings only

    try:
        return parsed("YAML", load)
    except BadFrontMatter:
        raise
    except BadData as exc:
        raise BadFrontMatter(f"the front matter is {exc}") from None


def _raw_text_fields(block: str) -> dict[str, str]:
    """The text fields written on one top-level line, unquoted, as their raw text."""
    out: dict[str, str] = {}
    for m in _RAW_LINE.finditer(block):
        value = m["value"]
        if m["key"] in TEXT_FIELDS and m["key"] not in out and value[0] not in "\"'|>&*!":
            out[m["key"]] = value
    return out


def _nesting(block: str) -> int:
    """How deep ``[`` and ``{`` go (quotes not taken into account: a bound, not a parse)."""
    depth = deepest = 0
    for ch in block:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    return deepest


def text_field(fields: dict[str, Any], key: str, limit: int = 1024) -> str | None:
    """A field that must be a string (a number or a TOML date is taken as its text); ``BadFrontMatter`` otherwise."""
    value = fields.get(key)
    if value is None:
        return None
    if not isinstance(value, str | int | float | datetime.date | datetime.time):
        raise BadFrontMatter(f"'{key}' must be text, not {type(value).__name__}")
    text = str(value).strip()
    if len(text) > limit:
        raise BadFrontMatter(f"'{key}' is over {limit} characters")
    return text or None


def word_list(fields: dict[str, Any], key: str) -> tuple[str, ...]:
    """``allowed-tools``: a list, or one string of names split on commas and spaces (``Bash(git add:*)`` is one)."""
    value = fields.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(_TOOL.findall(value))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise BadFrontMatter(f"'{key}' must be a list of tool names or one string of them")
