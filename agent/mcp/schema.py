"""MCP input schemas as the providers take them.

The schema is passed through unchanged when it already suits every provider. What providers reject is
fixed on a copy: a root that is not ``type: object`` (OpenAI), an object without ``properties``
(OpenAI), ``anyOf``/``oneOf``/``allOf``/``enum``/``not`` at the root (OpenAI), and ``$schema``/``$id`` at
the root (Gemini-style endpoints). Root alternatives are merged into one object whose properties are the
union of theirs, required only when every alternative requires them.
"""

from __future__ import annotations

import copy
from typing import Any

_COMBINERS = ("anyOf", "oneOf", "allOf")
_DROP = ("$schema", "$id", "enum", "not", "const")


def _branch_objects(schema: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key in _COMBINERS:
        for branch in schema.get(key) or []:
            if isinstance(branch, dict) and (branch.get("type") == "object" or "properties" in branch):
                out.append(branch)
    return out


def normalize(schema: Any) -> dict[str, Any]:
    """A provider-safe copy of ``schema`` (the same object when nothing needed fixing)."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    fine = schema.get("type") == "object" and isinstance(schema.get("properties"), dict) \
        and not any(k in schema for k in (*_COMBINERS, *_DROP))
    if fine:
        return schema
    out = copy.deepcopy(schema)
    branches = _branch_objects(out)
    notes = []
    if branches:
        props: dict[str, Any] = dict(out.get("properties") or {})
        required_sets = []
        for branch in branches:
            for key, value in (branch.get("properties") or {}).items():
                props.setdefault(key, value)
            required_sets.append(set(branch.get("required") or []))
        out["properties"] = props
        combined = set(out.get("required") or [])
        if "allOf" in out:
            for req in required_sets:
                combined |= req
        elif required_sets:
            combined |= set.intersection(*required_sets)
        if combined:
            out["required"] = sorted(combined)
        notes.append("the arguments follow one of several shapes; give the ones that fit")
    for key in (*_COMBINERS, *_DROP):
        out.pop(key, None)
    out["type"] = "object"
    if not isinstance(out.get("properties"), dict):
        out["properties"] = {}
    if isinstance(out.get("required"), list):
        out["required"] = [r for r in out["required"] if isinstance(r, str) and r in out["properties"]]
        if not out["required"]:
            out.pop("required")
    if notes:
        description = out.get("description")
        out["description"] = f"{description} ({'; '.join(notes)})" if isinstance(description, str) else notes[0]
    return out
