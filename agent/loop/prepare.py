"""Validation and repair of the model's tool calls before anything runs."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..data_files import BadData, json_value
from ..tools.base import JsonObject, Tool
from ..tools.registry import ToolRegistry
from ..tools.schema import validate
from ..types import ToolCall

CUT_OFF = ("error: the arguments of this call were cut off because the response hit the output token limit, so "
           "nothing ran. Retry with smaller arguments (for a large file, write it in parts or use edit_file).")


@dataclass
class PreparedCall:
    call: ToolCall  # with the repaired name and arguments
    tool: Tool | None
    args: dict[str, Any] | None
    error: str | None = None
    note: str | None = None


def _snake(name: str) -> str:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name.strip())
    return re.sub(r"[\s\-.:/]+", "_", name).lower().strip("_")


def repair_name(name: str, names: list[str]) -> str | None:
    """The tool the model obviously meant, or None."""
    if name in names:
        return name
    lowered = {n.lower(): n for n in names}
    for candidate in (name.lower(), _snake(name)):
        if candidate in lowered:
            return lowered[candidate]
        for suffix in ("_tool", "tool", "_function"):
            if candidate.endswith(suffix) and candidate[: -len(suffix)].strip("_") in lowered:
                return lowered[candidate[: -len(suffix)].strip("_")]
        for prefix in ("functions.", "functions_", "tool_", "tools."):
            if candidate.startswith(prefix) and candidate[len(prefix):] in lowered:
                return lowered[candidate[len(prefix):]]
    close = difflib.get_close_matches(_snake(name), list(lowered), n=2, cutoff=0.8)
    if len(close) == 1 or (close and difflib.SequenceMatcher(None, _snake(name), close[0]).ratio() >= 0.9):
        return lowered[close[0]]
    return None


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def _loads_object(text: str) -> dict[str, Any] | None:
    try:
        value = json_value(text)
    except BadData:  # not JSON, or nested too deeply to parse: an invalid call, answered with an error
        return None
    if isinstance(value, str):  # double-encoded
        return _loads_object(value)
    return value if isinstance(value, dict) else None


def repair_arguments(raw: str, *, truncated: bool) -> tuple[dict[str, Any] | None, str | None]:
    """Parsed arguments, or an error. Only unambiguous repairs are made; a cut-off string is never run."""
    if truncated:
        return None, CUT_OFF
    text = (raw or "").strip()
    if not text:
        return {}, None
    parsed = _loads_object(text)
    if parsed is not None:
        return parsed, None
    candidates = []
    fence = _FENCE.match(text)
    base = fence.group(1) if fence else text
    candidates.append(base)
    candidates.append(_TRAILING_COMMA.sub(r"\1", base))
    pythonish = re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", re.sub(r"\bNone\b", "null", base)))
    candidates.append(_TRAILING_COMMA.sub(r"\1", pythonish))
    opens = base.count("{") - base.count("}")
    if 0 < opens <= 3 and base.count('"') % 2 == 0:
        candidates.append(_TRAILING_COMMA.sub(r"\1", base + "}" * opens))
    start, end = base.find("{"), base.rfind("}")
    if 0 < start < end:
        candidates.append(base[start:end + 1])
    results = []
    for c in candidates:
        value = _loads_object(c)
        if value is not None and value not in results:
            results.append(value)
    if len(results) == 1:
        return results[0], None
    return None, (f"error: the arguments are not valid JSON ({text[:200]!r}). Send a single JSON object that matches "
                  "the tool's parameters.")


def prepare_calls(calls: list[ToolCall], registry: ToolRegistry, *, truncated: bool,
                  parameters: Callable[[Tool], JsonObject] = lambda tool: tool.parameters) -> list[PreparedCall]:
    """Each call checked against the parameters the model was shown (``parameters``), its name and arguments
    repaired where that is certain."""
    names = registry.names
    prepared = []
    for call in calls:
        name = call["function"]["name"]
        fixed = repair_name(name, names)
        note = None
        if fixed is None:
            prepared.append(PreparedCall(call, None, None, f"error: there is no tool named {name!r}. The tools are: "
                                                         f"{', '.join(names)}."))
            continue
        if fixed != name:
            note = f"tool name {name!r} was taken as {fixed!r}"
        tool = registry.get(fixed)
        assert tool is not None
        args, error = repair_arguments(call["function"]["arguments"], truncated=truncated)
        problems: list[str] = []
        if args is not None:
            args, problems = validate(parameters(tool), args)
        if problems:
            error = f"error: invalid arguments for {fixed}: " + "; ".join(problems)
        original = call["function"]["arguments"]
        keep = error or args is None or _loads_object(original or "{}") == args
        new_call: ToolCall = {"id": call["id"], "type": "function", "function": {
            "name": fixed, "arguments": original if keep else json.dumps(args, ensure_ascii=False)}}
        prepared.append(PreparedCall(new_call, tool, args if not error else None, error, note))
    return prepared
