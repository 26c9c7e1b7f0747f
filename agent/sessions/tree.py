"""Sessions as a tree: forks (a copy of a transcript, linked to its origin), rewinds (the last turns'
checkpoints taken with the state each file was left in), and deleting a session with its children.

Migration 3 adds ``sessions.forked_from`` and, per checkpoint, the state the turn left the file in
(``after_existed``, ``after_content``), so a rewind can tell a user's later edit from the turn's own.
docs/sessions.md "Fork, rewind, delete".
"""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from .records import now_iso
from .schema import INSERT_MESSAGE, SELECT_MESSAGE, decode_message, encode_message

SCHEMA_3 = (
    "ALTER TABLE sessions ADD COLUMN forked_from TEXT REFERENCES sessions(id) ON DELETE SET NULL",
    "ALTER TABLE checkpoints ADD COLUMN after_existed INTEGER",
    "ALTER TABLE checkpoints ADD COLUMN after_content TEXT",
    "CREATE INDEX sessions_by_origin ON sessions(forked_from)",
)


async def migration_3(conn: aiosqlite.Connection) -> None:
    """Fork links and the after-state of checkpoints."""
    for statement in SCHEMA_3:
        await conn.execute(statement)


@dataclass(frozen=True)
class FileRewind:
    """One file a rewind puts back: its state before the earliest rewound turn, and the state the latest one
    left it in (``after_known`` False: recorded before migration 3, so a later edit cannot be detected)."""

    path: str
    existed: bool
    content: str | None
    after_known: bool
    after_existed: bool
    after_content: str | None


async def fork(conn: aiosqlite.Connection, source_id: str, new_id: str, *, keep: int | None, title: str) -> int:
    """Copy ``source_id``'s first ``keep`` active messages (all when None) and the checkpoints of the copied
    turns into a new session ``new_id`` linked to it; returns how many messages were copied."""
    columns = SELECT_MESSAGE.removeprefix("SELECT ").removesuffix(" FROM messages")
    rows = list(await conn.execute_fetchall(
        f"SELECT turn, {columns} FROM messages WHERE session_id = ? AND archived = 0 ORDER BY seq", (source_id,)))
    counted = list(await conn.execute_fetchall("SELECT turn_count FROM sessions WHERE id = ?", (source_id,)))
    turn_count = int(counted[0][0]) if counted else 0
    if keep is not None:
        rows = rows[:keep]
        turn_count = int(rows[-1][0]) if rows else 0
    stamp = now_iso()
    await conn.execute(
        "INSERT INTO sessions (id, cwd, title, model, system_prompt, created_at, updated_at, parent_id, turn_count, "
        "meta, forked_from) SELECT ?, cwd, ?, model, system_prompt, ?, ?, NULL, ?, meta, id FROM sessions "
        "WHERE id = ?", (new_id, title, stamp, stamp, turn_count, source_id))
    await conn.executemany(INSERT_MESSAGE, [encode_message(decode_message(r[1:]), new_id, int(r[0]), stamp)
                                            for r in rows])
    await conn.execute(
        "INSERT INTO checkpoints (session_id, turn, path, existed, content, created_at, after_existed, after_content) "
        "SELECT ?, turn, path, existed, content, created_at, after_existed, after_content FROM checkpoints "
        "WHERE session_id = ? AND turn <= ?", (new_id, source_id, turn_count))
    return len(rows)


async def origin(conn: aiosqlite.Connection, session_id: str) -> str | None:
    rows = list(await conn.execute_fetchall("SELECT forked_from FROM sessions WHERE id = ?", (session_id,)))
    return str(rows[0][0]) if rows and rows[0][0] is not None else None


async def record_after(conn: aiosqlite.Connection, session_id: str, turn: int, path: str,
                       content: str | None) -> None:
    """The turn's edit left ``path`` holding ``content`` (None: deleted)."""
    await conn.execute("UPDATE checkpoints SET after_existed = ?, after_content = ? "
                       "WHERE session_id = ? AND turn = ? AND path = ?",
                       (int(content is not None), content, session_id, turn, path))


async def since(conn: aiosqlite.Connection, session_id: str, turn: int) -> list[FileRewind]:
    """Per path changed in ``turn`` or later: the state before the earliest such turn, the state after the latest."""
    rows = await conn.execute_fetchall(
        "SELECT path, existed, content, after_existed, after_content FROM checkpoints "
        "WHERE session_id = ? AND turn >= ? ORDER BY turn ASC, rowid ASC", (session_id, turn))
    first: dict[str, FileRewind] = {}
    for path, existed, content, after_existed, after_content in rows:
        before = first.get(str(path))
        base = before if before is not None else FileRewind(str(path), bool(existed), content, False, False, None)
        first[str(path)] = FileRewind(base.path, base.existed, base.content, after_existed is not None,
                                      bool(after_existed), after_content)
    return sorted(first.values(), key=lambda f: f.path)


async def drop_since(conn: aiosqlite.Connection, session_id: str, turn: int) -> None:
    await conn.execute("DELETE FROM checkpoints WHERE session_id = ? AND turn >= ?", (session_id, turn))


async def delete(conn: aiosqlite.Connection, session_id: str) -> list[str]:
    """The session, its child sessions (``parent_id``, to any depth), their messages and checkpoints; returns
    the ids removed. Forks of it stay (their link is set to NULL)."""
    ids = [str(r[0]) for r in await conn.execute_fetchall(
        "WITH RECURSIVE tree(id) AS (SELECT id FROM sessions WHERE id = ? UNION "
        "SELECT s.id FROM sessions s JOIN tree t ON s.parent_id = t.id) SELECT id FROM tree", (session_id,))]
    for sid in ids:
        await conn.execute("DELETE FROM messages WHERE session_id = ?", (sid,))
        await conn.execute("DELETE FROM leases WHERE session_id = ?", (sid,))
    for sid in reversed(ids):
        await conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
    return ids
