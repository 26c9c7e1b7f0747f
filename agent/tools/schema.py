"""Validation of tool arguments against the tools' JSON schemas (the subset they use), with safe coercions."""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict,
}


def _coerce(value: Any, kind: str) -> Any:
    """Unambiguous fixes models need: "5" for an integer, "true" for a boolean, 5 for a string."""
    if kind == "integer" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == "number" and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    if kind == "boolean" and isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if kind == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def validate(schema: dict[str, Any], value: Any, where: str = "arguments") -> tuple[Any, list[str]]:
    """The (possibly coerced) value and a list of problems, each naming the argument."""
    kind = schema.get("type")
    problems: list[str] = []
    if isinstance(kind, str):
        value = _coerce(value, kind)
        expected = _TYPES.get(kind)
        ok = expected is not None and isinstance(value, expected)
        if kind in ("integer", "number") and isinstance(value, bool):
            ok = False
        if not ok:
            return value, [f"{where} must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}, "
                           f"got {type(value).__name__} {str(value)[:60]!r}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where} must be one of {schema['enum']}, got {value!r}")
    if isinstance(value, dict):
        props: dict[str, Any] = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value or value[name] is None:
                problems.append(f"{where}.{name} is required")
        fixed = {}
        for key, item in value.items():
            if key in props:
                if item is None and key not in schema.get("required", []):
                    continue  # an explicit null for an optional argument means "not given"
                item, sub = validate(props[key], item, f"{where}.{key}" if where != "arguments" else key)
                problems.extend(sub)
                fixed[key] = item
            elif schema.get("additionalProperties", True) is False:
                problems.append(f"unknown argument {key!r} (expected: {', '.join(props) or 'none'})")
            else:
                fixed[key] = item
        value = fixed
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        fixed_items = []
        for i, item in enumerate(value):
            item, sub = validate(schema["items"], item, f"{where}[{i}]")
            problems.extend(sub)
            fixed_items.append(item)
        value = fixed_items
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{where} must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{where} must be at most {schema['maximum']}")
    return value, problems
