"""The session store on real SQLite files (docs/loop.md §8)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentls.agent.sessions import SessionStore, StoreClosed, default_db_path
from agentls.agent.sessions.store import fts_query
from agentls.agent.sessions.schema import MIGRATIONS
from agentls.agent.transcript import repair, violations
from agentls.agent.types import Message

PROMPT = "You are agentls.\n\nWorkspace root: /w\n\u00e9\u00e8 \u2014 tabs\tand trailing spaces   \n"

ROUND_TRIP: list[Message] = [
    {"role": "user", "content": "Fix the tokenizer in src/lexer.py", "meta": {"editor": {"file": "a.py"}}},
    {"role": "assistant", "content": None, "reasoning": "Let me think\u2026", "reasoning_signature": "sig==",
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "read_file", "arguments": "{\"path\": \"src/lexer.py\"}"}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "search_files", "arguments": "{\"pattern\": \"def tokenize\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "1| import re\n"},
    {"role": "tool", "tool_call_id": "call_2", "name": "search_files", "content": "", "meta": {"error": True}},
    {"role": "user", "content": [{"type": "text", "text": "look at this"},
                                 {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}],
     "meta": {"steer": True}},
    {"role": "assistant", "content": "Done: the tokenizer handles unicode identifiers now.", "tool_calls": []},
    {"role": "user", "content": "[1, 2] looks like JSON but is text"},
    {"role": "assistant"},
]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SessionStore]:
    async with SessionStore(tmp_path / "data" / "sessions.db") as s:
        yield s


async def test_construct_opens_nothing_and_close_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "s.db"
    s = SessionStore(path)
    assert not path.exists()
    with pytest.raises(StoreClosed):
        await s.get_session("x")
    await s.open()
    await s.open()
    assert path.exists() and (path.stat().st_mode & 0o777) == 0o600
    await s.close()
    await s.close()


async def test_in_memory_store() -> None:
    async with SessionStore(":memory:") as mem:
        await mem.create_session(session_id="s1", cwd="/w", model="m", system_prompt="p")
        await mem.append_messages("s1", ROUND_TRIP, turn=1)
        assert await mem.load_messages("s1") == ROUND_TRIP
    assert not Path(":memory:").exists()


async def test_wal_mode_and_pragmas(store: SessionStore) -> None:
    with sqlite3.connect(store.path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("SELECT version FROM schema_version").fetchone()[0] == len(MIGRATIONS)


async def test_every_field_round_trips(store: SessionStore) -> None:
    await store.create_session(session_id="s1", cwd="/w", model="gpt-4o", system_prompt=PROMPT)
    await store.append_messages("s1", ROUND_TRIP[:4], turn=1)
    await store.append_messages("s1", ROUND_TRIP[4:], turn=2)
    assert await store.load_messages("s1") == ROUND_TRIP
    record = await store.get_session("s1")
    assert record is not None and record.system_prompt == PROMPT and record.turn_count == 2
    assert await store.count_messages("s1") == len(ROUND_TRIP)
    async with SessionStore(store.path) as again:  # a second connection sees the same bytes
        assert await again.load_messages("s1") == ROUND_TRIP
        record2 = await again.get_session("s1")
        assert record2 is not None and record2.system_prompt.encode() == PROMPT.encode()


async def test_resume_repairs_a_broken_tail(store: SessionStore) -> None:
    await store.create_session(session_id="s1", cwd="/w", model="m", system_prompt="p")
    await store.append_messages("s1", ROUND_TRIP[:2], turn=1)  # tool calls without results
    loaded = await store.load_messages("s1")
    assert violations(loaded) != []
    assert violations(repair(loaded)) == []


async def test_session_fields_and_update(store: SessionStore) -> None:
    created = await store.create_session(session_id="s1", cwd=Path("/w"), model="m", system_prompt="p",
                                         title="First", meta={"k": 1})
    child = await store.create_session(session_id="s2", cwd="/w", model="m", system_prompt="p", parent_id="s1")
    assert created.cwd == "/w" and created.meta == {"k": 1} and child.parent_id == "s1"
    await store.update_session("s1", title="Renamed", model="claude", turn_count=7, meta={"x": [1]})
    got = await store.get_session("s1")
    assert got is not None and (got.title, got.model, got.turn_count, got.meta) == ("Renamed", "claude", 7, {"x": [1]})
    assert got.updated_at >= created.updated_at
    assert await store.get_session("nope") is None


async def test_search_finds_messages_and_survives_hostile_queries(store: SessionStore) -> None:
    await store.create_session(session_id="s1", cwd="/w", model="m", system_prompt="p")
    await store.create_session(session_id="s2", cwd="/w", model="m", system_prompt="p")
    await store.append_messages("s1", ROUND_TRIP, turn=1)
    await store.append_messages("s2", [{"role": "user", "content": "the tokenizer again"}], turn=1)
    hits = await store.search("tokenizer")
    assert {h.session_id for h in hits} == {"s1", "s2"}
    only = await store.search("tokenizer", session_id="s2")
    assert [(h.session_id, h.seq, h.role) for h in only] == [("s2", 1, "user")] and "[tokenizer]" in only[0].snippet
    args_hit = await store.search("def tokenize")  # tool-call arguments are indexed
    assert any(h.seq == 2 and h.role == "assistant" for h in args_hit)
    for hostile in ['"foo AND (', "foo AND (", 'NEAR(a b', "*", '"', "a:b", "-x", "^", "col:val OR", "'", "(((",
                    "tokenizer\"", "\u0000", ""]:
        await store.search(hostile)
        await store.list_sessions(query=hostile)
    assert fts_query("") is None and fts_query('a"b c') == '"a""b" "c"'


async def test_list_by_cwd_with_paging_and_query(store: SessionStore) -> None:
    for i in range(7):
        await store.create_session(session_id=f"a{i}", cwd="/proj/a", model="m", system_prompt="p",
                                   title=f"session {i}")
        await store.append_messages(f"a{i}", [{"role": "user", "content": f"message number {i}"}], turn=1)
    await store.create_session(session_id="b0", cwd="/proj/b", model="m", system_prompt="p", title="other")
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page, cursor = await store.list_sessions(cwd="/proj/a", limit=3, cursor=cursor)
        seen += [r.id for r in page]
        if cursor is None:
            break
    assert seen == [f"a{i}" for i in reversed(range(7))]  # newest first
    everything, _ = await store.list_sessions(limit=50)
    assert {r.id for r in everything} == set(seen) | {"b0"}
    by_text, _ = await store.list_sessions(query="number")
    assert {r.id for r in by_text} == set(seen)
    by_title, _ = await store.list_sessions(query="other")
    assert [r.id for r in by_title] == ["b0"]
    with pytest.raises(ValueError):
        await store.list_sessions(cursor="garbage!")


async def test_replace_messages_archives_and_keeps_the_session(store: SessionStore) -> None:
    await store.create_session(session_id="s1", cwd="/w", model="m", system_prompt="p")
    await store.append_messages("s1", ROUND_TRIP, turn=3)
    compacted: list[Message] = [ROUND_TRIP[0], {"role": "user", "content": "[Summary of 6 earlier messages] ok",
                                               "meta": {"summary": True}}]
    compacted = repair(compacted)
    await store.replace_messages("s1", compacted)
    assert await store.load_messages("s1") == compacted
    record = await store.get_session("s1")
    assert record is not None and record.id == "s1" and record.system_prompt == "p"
    more: list[Message] = [{"role": "assistant", "content": "continuing"}]
    await store.append_messages("s1", more, turn=4)
    assert await store.load_messages("s1") == compacted + more
    hits = await store.search("unicode identifiers")  # archived rows stay searchable
    assert hits and hits[0].archived
    with sqlite3.connect(store.path) as raw:
        seqs = [r[0] for r in raw.execute("SELECT seq FROM messages WHERE session_id='s1' ORDER BY seq")]
        assert seqs == list(range(1, len(seqs) + 1))


async def test_delete_session_removes_everything(store: SessionStore) -> None:
    await store.create_session(session_id="s1", cwd="/w", model="m", system_prompt="p", title="doomed")
    await store.append_messages("s1", ROUND_TRIP, turn=1)
    await store.save_checkpoint("s1", 1, "a.py", True, "old")
    await store.delete_session("s1")
    assert await store.get_session("s1") is None and await store.load_messages("s1") == []
    assert await store.search("tokenizer") == [] and (await store.list_sessions(query="doomed"))[0] == []
    assert await store.pop_checkpoints("s1") == []


async def test_checkpoints_first_edit_wins_and_pop_across_turns(store: SessionStore) -> None:
    await store.create_session(session_id="s1", cwd="/w", model="m", system_prompt="p")
    assert await store.save_checkpoint("s1", 1, "a.py", True, "a0")
    assert not await store.save_checkpoint("s1", 1, "a.py", True, "a-later")  # only the first edit's
    assert await store.save_checkpoint("s1", 1, "b.py", False, None)
    assert await store.save_checkpoint("s1", 2, "a.py", True, "a1")
    assert await store.save_checkpoint("s1", 2, "c.py", True, "c1")
    assert await store.save_checkpoint("s1", 3, "a.py", True, "a2")
    assert await store.checkpoint_turns("s1") == [3, 2, 1]
    two = await store.pop_checkpoints("s1", turns=2)
    assert [(c.path, c.turn, c.existed, c.content) for c in two] == [("a.py", 2, True, "a1"), ("c.py", 2, True, "c1")]
    one = await store.pop_checkpoints("s1")
    assert [(c.path, c.existed, c.content) for c in one] == [("a.py", True, "a0"), ("b.py", False, None)]
    assert await store.pop_checkpoints("s1") == [] and await store.checkpoint_turns("s1") == []


async def test_default_db_path_honours_the_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "d"))
    assert default_db_path() == tmp_path / "d" / "sessions.db"
    monkeypatch.delenv("AGENTLS_DATA_DIR")
    assert default_db_path().name == "sessions.db" and "agentls" in str(default_db_path())
    assert os.environ.get("AGENTLS_DATA_DIR") is None


async def test_two_stores_on_one_file_interleave(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    async with SessionStore(path) as a, SessionStore(path) as b:
        await a.create_session(session_id="s1", cwd="/w", model="m", system_prompt="p")
        await b.create_session(session_id="s2", cwd="/w", model="m", system_prompt="p")
        for i in range(20):
            await (a if i % 2 else b).append_messages("s1" if i % 3 else "s2",
                                                      [{"role": "user", "content": f"m{i}"}], turn=i)
        total = len(await a.load_messages("s1")) + len(await b.load_messages("s2"))
        assert total == 20


async def test_child_sessions_are_linked_and_listed_only_under_their_parent(tmp_path: Path) -> None:
    """Subagents' sessions (docs/loop.md §9.9): migration 4's parent_tool_call_id, in a real file."""
    async with SessionStore(tmp_path / "s.db") as store:
        await store.create_session(session_id="p", cwd="/w", model="m", system_prompt="s")
        await store.create_session(session_id="c1", cwd="/w", model="m", system_prompt="c", parent_id="p",
                                   parent_tool_call_id="call_1")
        await store.create_session(session_id="c2", cwd="/w", model="m", system_prompt="c", parent_id="p",
                                   parent_tool_call_id="call_2")
        await store.create_session(session_id="fork", cwd="/w", model="m", system_prompt="s", parent_id="p")
        listed, _ = await store.list_sessions()
        assert sorted(r.id for r in listed) == ["fork", "p"]
        assert sorted(r.id for r in (await store.list_sessions(children=True))[0]) == ["c1", "c2", "fork", "p"]
        children = await store.child_sessions("p")
        assert [(c.id, c.parent_tool_call_id) for c in children] == [("c1", "call_1"), ("c2", "call_2")]
    async with SessionStore(tmp_path / "s.db") as store:  # the link survives reopening the file
        record = await store.get_session("c2")
        assert record is not None and record.parent_id == "p" and record.parent_tool_call_id == "call_2"
