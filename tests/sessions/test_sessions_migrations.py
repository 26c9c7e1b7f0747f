"""Schema versions: forward migrations, atomic steps, and refusing a database from the future."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite
import pytest

from agentls.agent.sessions import SchemaTooNew, SessionStore
from agentls.agent.sessions.schema import MIGRATIONS, current_version, migrate

MESSAGES = [{"role": "user", "content": "hello from version 1"}, {"role": "assistant", "content": "hi"}]


LATEST = len(MIGRATIONS)


async def migration_next(conn: aiosqlite.Connection) -> None:
    """What a real next migration looks like: a new column with a backfill."""
    await conn.execute("ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0")
    await conn.execute("UPDATE sessions SET pinned = 1 WHERE title IS NOT NULL")


async def broken_migration_next(conn: aiosqlite.Connection) -> None:
    await conn.execute("ALTER TABLE sessions ADD COLUMN half_done INTEGER")
    raise RuntimeError("the migration failed half way")


async def make_current(path: Path) -> None:
    async with SessionStore(path) as store:
        await store.create_session(session_id="old", cwd="/w", model="m", system_prompt="p", title="kept")
        await store.append_messages("old", MESSAGES, turn=1)  # type: ignore[arg-type]


async def test_fresh_database_gets_every_migration(tmp_path: Path) -> None:
    async with aiosqlite.connect(tmp_path / "fresh.db", isolation_level=None) as conn:
        assert await current_version(conn) == 0
        assert await migrate(conn) == LATEST
        assert await migrate(conn) == LATEST  # idempotent


async def test_old_version_database_is_migrated_forward(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    await make_current(path)
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        assert await current_version(conn) == LATEST
        assert await migrate(conn, (*MIGRATIONS, migration_next)) == LATEST + 1
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT id, pinned FROM sessions").fetchall() == [("old", 1)]
        assert raw.execute("SELECT version FROM schema_version").fetchall() == [(LATEST + 1,)]
    # This agentls only knows the versions up to LATEST: it refuses the newer database instead of corrupting it.
    with pytest.raises(SchemaTooNew):
        await SessionStore(path).open()


async def test_a_failed_migration_leaves_the_old_version(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    await make_current(path)
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        with pytest.raises(RuntimeError):
            await migrate(conn, (*MIGRATIONS, broken_migration_next))
        assert await current_version(conn) == LATEST
        columns = [r[1] for r in await conn.execute_fetchall("PRAGMA table_info(sessions)")]
        assert "half_done" not in columns
    async with SessionStore(path) as store:
        assert await store.load_messages("old") == MESSAGES
