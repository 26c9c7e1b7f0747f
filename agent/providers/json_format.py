"""The ``response_format`` of ``tool_mode = "json"``: one call of one of the tools, or a final answer
(agent/providers/json_mode.py parses the replies)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from .base import ToolSchema

FINAL_ANSWER = "final_answer"
SCHEMA_NAME = "tool_call_or_final_answer"

_FINAL_PARAMETERS: dict[str, Any] = {
    "type": "object", "properties": {"text": {"type": "string", "description": "The answer shown to the user."}},
    "required": ["text"], "additionalProperties": False}
_EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def _function_of(tool: ToolSchema) -> dict[str, Any]:
    fn = tool.get("function", tool)
    return fn if isinstance(fn, dict) else {}


def _constrain_path(parameters: dict[str, Any], paths: Sequence[str]) -> None:
    props = parameters.get("properties")
    if isinstance(props, dict) and isinstance(props.get("path"), dict):
        props["path"] = {**props["path"], "type": "string", "enum": list(paths)}


def build_response_format(tools: Sequence[ToolSchema], *, allow_final: bool = True,
                          paths: Sequence[str] | None = None, path_tools: Sequence[str] = ()) -> dict[str, Any]:
    """The ``response_format`` admitting one call of any of ``tools``, or ``final_answer {text}``
    (left out when ``allow_final`` is False: the model must act before it may answer).

    ``paths`` (the workspace's files, when there are few enough) becomes an ``enum`` for the ``path``
    of the ``path_tools`` (those whose ``path`` names an existing file: ``read_file`` and ``edit_file``,
    ``Tool.names_existing_file``), so the grammar itself rules out invented paths (``write_file`` may still
    create new ones).

    ``anyOf`` over ``{name: const, arguments: <that tool's parameters>}``: the grammar then forces the
    arguments to match the chosen tool. Keep passing ``tools`` too, so the chat template describes them.
    """
    variants: list[dict[str, Any]] = []
    seen: set[str] = set()
    for tool in tools:
        fn = _function_of(tool)
        name = fn.get("name")
        if not isinstance(name, str) or not name or name in seen or name == FINAL_ANSWER:
            continue
        seen.add(name)
        params = fn.get("parameters")
        params = copy.deepcopy(params) if isinstance(params, dict) else copy.deepcopy(_EMPTY_PARAMETERS)
        if paths and name in path_tools:
            _constrain_path(params, paths)
        if params.get("type") == "object":  # the grammar admits only the declared arguments
            params.setdefault("additionalProperties", False)
        variants.append(_variant(name, params))
    if allow_final or not variants:
        variants.append(_variant(FINAL_ANSWER, copy.deepcopy(_FINAL_PARAMETERS)))
    return {"type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": {"anyOf": variants}}}


def _variant(name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"name": {"const": name}, "arguments": parameters},
            "required": ["name", "arguments"], "additionalProperties": False}


