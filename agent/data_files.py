"""Parsing data nobody vetted: workspace files (YAML front matter, TOML, JSON), a hook's stdout, a model's tool
arguments. Every way a parser can fail (a syntax error, nesting deep enough to exhaust the stack, a YAML date
that is no date, an integer too long to convert, bad text) becomes one ``BadData`` whose message says what is
wrong, so a caller skips that one input with a warning naming it and goes on (docs/workflows.md, "Problems").
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
MAX_DEPTH = 100  # arrays and objects, in JSON
# What a parser of untrusted text may raise besides its own error class (yaml.YAMLError is added lazily).
PARSE_ERRORS: tuple[type[BaseException], ...] = (ValueError, RecursionError, TypeError, OverflowError, UnicodeError,
                                                 KeyError, IndexError, MemoryError)


class BadData(ValueError):
    """The text could not be parsed; the message says why (one line, bounded)."""


def parsed(kind: str, parse: Callable[[], T]) -> T:
    """``parse()``, with every parse failure turned into ``BadData("not valid <kind>: ...")``."""
    errors: tuple[type[BaseException], ...] = PARSE_ERRORS
    try:
        import yaml

        errors = (*errors, yaml.YAMLError)
    except ImportError:  # pragma: no cover - PyYAML is a dependency
        pass
    try:
        return parse()
    except BadData:
        raise
    except RecursionError:
        raise BadData(f"not valid {kind}: it is nested too deeply") from None
    except errors as exc:
        raise BadData(f"not valid {kind}: {describe(exc)}") from None


def describe(exc: BaseException) -> str:
    """One bounded line for a parse error (a YAML error's problem and line when it has them)."""
    problem = getattr(exc, "problem", None)
    if isinstance(problem, str) and problem:
        mark = getattr(exc, "problem_mark", None)
        line = getattr(mark, "line", None)
        return problem + (f" (line {line + 1})" if isinstance(line, int) else "")
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def json_value(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """JSON, at most ``max_depth`` arrays and objects deep (deeper values would exhaust the stack of whatever
    walks them next: a schema check, an encoder)."""
    value = parsed("JSON", lambda: json.loads(text))
    if _depth(value, max_depth) > max_depth:
        raise BadData(f"not valid JSON here: it is nested more than {max_depth} deep")
    return value


def _depth(value: Any, limit: int) -> int:
    """How deep lists and dicts go in ``value``, counted without recursion and no further than ``limit + 1``."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, list | dict):
            continue
        deepest = max(deepest, depth)
        if depth > limit:
            return deepest
        stack += [(child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)]
    return deepest


def toml_table(text: str) -> dict[str, Any]:
    return parsed("TOML", lambda: tomllib.loads(text))
