"""Damaged rows in a real store file (edited with sqlite3): a bad ``sessions`` row is listed with defaults and never
hides the others, and a message row of the wrong shape loads, and forks, as a transcript the model APIs take
(docs/sessions.md "When the file is not what it should be")."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentls.agent.sessions import SessionStore
from agentls.agent.sessions.records import BadCursor
from agentls.agent.transcript import PART_TYPES, violations
from agentls.agent.types import Message

TRANSCRIPT: list[Message] = [
    {"role": "user", "content": [{"type": "text", "text": "look"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "reading"}], "reasoning": "hm",
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "1| x\n"},
    {"role": "assistant", "content": "done", "provider_data": {"id": "resp_1"}},
]


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Path]:
    path = tmp_path / "sessions.db"
    async with SessionStore(path) as store:
        for n in range(3):
            await store.create_session(session_id=f"s{n}", cwd="/w", model="m", system_prompt="p", title=f"t{n}")
            await store.append_messages(f"s{n}", TRANSCRIPT, turn=1)
    yield path


def damage(path: Path, *statements: str) -> None:
    with sqlite3.connect(path) as conn:
        for statement in statements:
            assert conn.execute(statement).rowcount >= 1, statement


async def test_a_damaged_sessions_row_is_listed_with_defaults_and_hides_nothing(db: Path) -> None:
    damage(db, "UPDATE sessions SET meta = 'not json' WHERE id = 's0'",
           "UPDATE sessions SET meta = '[1, 2]', turn_count = 'abc' WHERE id = 's1'")
    async with SessionStore(db) as store:
        records, cursor = await store.list_sessions()
        assert sorted(r.id for r in records) == ["s0", "s1", "s2"] and cursor is None
        first, after = await store.list_sessions(limit=1)  # paging past a damaged row
        assert after is not None
        rest, _ = await store.list_sessions(limit=5, cursor=after)
        assert len(first) + len(rest) == 3
        damaged = {r.id: r for r in records}
        assert damaged["s0"].meta == {} and damaged["s1"].meta == {} and damaged["s1"].turn_count == 0
        loaded = await store.get_session("s1")
        assert loaded is not None and loaded.turn_count == 0
        assert (await store.fork_session("s1", "f1", title="fork")) is not None
        with pytest.raises(BadCursor):  # "bad cursor" is said only of a cursor
            await store.list_sessions(cursor="not a cursor")


async def test_message_rows_of_the_wrong_shape_load_and_fork_as_a_valid_transcript(db: Path) -> None:
    damage(db, "UPDATE messages SET content = '[1, 2, {\"type\": \"image\"}]' WHERE role = 'user'",
           "UPDATE messages SET content = '[{\"type\": \"text\"}]' WHERE role = 'assistant' AND content_kind = 3",
           "UPDATE messages SET extra = '{\"bogus_field\": 1, \"reasoning\": {\"a\": 1}, \"provider_data\": 5}' "
           "WHERE role = 'assistant'",
           "UPDATE messages SET turn = 'zz' WHERE session_id = 's0'")
    async with SessionStore(db) as store:
        await store.fork_session("s0", "f0", title="fork")  # was: type 'dict' is not supported
        for sid in ("s0", "f0"):
            messages = await store.load_messages(sid)
            assert violations(messages) == []
            assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
            for m in messages:
                assert set(m) <= set(Message.__annotations__)
                assert "bogus_field" not in m and not isinstance(m.get("reasoning"), dict)
                assert "provider_data" not in m  # a number where an object belongs
                content = m.get("content")
                if isinstance(content, list):
                    assert all(isinstance(p, dict) and p.get("type") in PART_TYPES[m["role"]] for p in content)
            assert messages[0]["content"] == "" and messages[1].get("tool_calls")
