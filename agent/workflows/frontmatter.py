"""YAML front matter (``---`` ... ``---`` at the top of a Markdown file), read safely (docs/workflows.md).

Only a mapping of plain values is accepted: anchors and aliases are refused outright (a "billion laughs"
document is rejected before it is built), and the block is capped in size.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_FRONT_MATTER = 16 * 1024
MAX_NESTING = 32  # brackets deep: PyYAML's time grows with the square of it
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when it is there


class BadFrontMatter(ValueError):
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
    try:
        for event in yaml.parse(block, Loader=_LOADER):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise BadFrontMatter("the front matter uses YAML anchors or aliases, which are not accepted")
        data = yaml.load(block, Loader=_LOADER)  # a safe loader: plain values only
    except yaml.YAMLError as exc:
        raise BadFrontMatter(f"the front matter is not valid YAML: {_first_line(exc)}") from None
    except RecursionError:
        raise BadFrontMatter("the front matter is nested too deeply") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BadFrontMatter(f"the front matter must be a mapping of fields, not {type(data).__name__}")
    return {str(k): v for k, v in data.items()}


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


def _first_line(exc: Exception) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        mark = exc.problem_mark
        return exc.problem + (f" (line {mark.line + 2} of the file)" if mark is not None else "")
    return " ".join(str(exc).split())[:300]


def text_field(fields: dict[str, Any], key: str, limit: int = 1024) -> str | None:
    """A field that must be a string (a number is taken as its text); ``BadFrontMatter`` otherwise."""
    value = fields.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise BadFrontMatter(f"'{key}' must be text, not {type(value).__name__}")
    text = str(value).strip()
    if len(text) > limit:
        raise BadFrontMatter(f"'{key}' is over {limit} characters")
    return text or None


def word_list(fields: dict[str, Any], key: str) -> tuple[str, ...]:
    """``allowed-tools``: a list, or one string of names split on commas and spaces."""
    value = fields.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(w for w in value.replace(",", " ").split() if w)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise BadFrontMatter(f"'{key}' must be a list of tool names or one string of them")
