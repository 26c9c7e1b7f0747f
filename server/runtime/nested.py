"""A value inside nested JSON objects (standard library only: both faces read ``initialize`` with it
before anything heavy is imported)."""

from __future__ import annotations

from typing import Any


def nested(data: Any, *path: str) -> Any:
    """``data[path[0]][path[1]]...``, or None where an object or a key is missing."""
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data
