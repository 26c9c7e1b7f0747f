"""The id of a JSON-RPC request that cannot be parsed (too deep, too big), so its error can still be
answered to the right request."""

from __future__ import annotations

import json
import re

_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null')


def top_level_id(raw: bytes) -> int | str | None:
    """The value of the top-level ``"id"`` key (an integer or a string), found without recursion.

    Only for text that starts as an object: a fragment (the second half of a split line) could start
    inside a string and mislead the scan into another request's id."""
    if not raw.lstrip().startswith(b"{"):
        return None
    depth = 0
    key: bytes | None = None
    expect_value = False
    for match in _TOKEN.finditer(raw):
        token = match.group()
        if expect_value:  # the token right after `"id":` is the id, or the id is unusable
            try:
                value = json.loads(token)
            except ValueError:
                return None
            return value if isinstance(value, str | int) and not isinstance(value, bool) else None
        if token in (b"{", b"["):
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                return None
        elif token == b":":
            expect_value = depth == 1 and key == b'"id"'
        elif token == b",":
            key = None
        elif depth == 1 and token.startswith(b'"'):
            key = token
    return None
