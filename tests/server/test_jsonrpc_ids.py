"""Recovering the id of a request too deep or too big to parse, so its error answers the right request."""

from __future__ import annotations

import pytest

from agentls.server.jsonrpc_ids import top_level_id


@pytest.mark.parametrize(("raw", "expected"), [
    (b'{"jsonrpc": "2.0", "id": 7, "params": ' + b"[" * 5000, 7),
    (b'{"params": {"id": 3}, "id": "abc"}', "abc"),
    (b'{"id": -4, "x": [1, 2]}', -4),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "m"}', None),
    (b'{"id": true, "method": "m"}', None),
    (b'{"id": null}', None),
    (b'{"id": {"a": 1}, "method": "m"}', None),
    (b'{"a": [1, {"id": 2}]}', None),
    (b'"id": 5, "method": "x"}', None),  # a fragment of a split line: never guessed
    (b'[{"id": 1}]', None),
])
def test_top_level_id(raw: bytes, expected: object) -> None:
    assert top_level_id(raw) == expected
