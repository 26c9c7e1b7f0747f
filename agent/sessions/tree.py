"""Sessions as a tree: forks (a copy of a transcript, linked to its origin), rewinds (the last turns'
checkpoints taken with the state each file was left in), and deleting a session with its children.

Migration 3 adds ``sessions.forked_from`` and, per checkpoint, the state the turn left the file in
(``after_existed``, ``after_content``), so a rewind can tell a user's later edit from the turn's own.
docs/sessions.md "Fork, rewind, delete".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import aiosqlite

from .records import as_int, now_iso
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
    """One file a rewind (or an undo) puts back: its state before the earliest of the turns, the state the
    file should hold now (``after_*``: what the last of those turns that touched it left; that turn's
    before-state when it recorded none, because its edit failed or predates migration 3), and
    ``between``: the file changed between two of those turns (one turn left it differently from how the next
    found it), so someone else edited it in between."""

    path: str
    existed: bool
    content: str | None
    after_existed: bool
    after_content: str | None
    between: bool = False

    def conflicts_with(self, current: str | None) -> bool:
        """Whether putting the file back would lose a change nobody recorded: ``current`` (None: missing) is
        not what the turns left, or the file was edited between them. The one rule of rewind and undo."""
        return self.between or not same_text(current, self.after_content if self.after_existed else None)


def same_text(a: str | None, b: str | None) -> bool:
    """Equal but for what editors change on their own when they show or save a file: line endings, blanks at
    line ends, empty lines at the end (a new file's buffer in Neovim holds one more; "insert final newline",
    "trim trailing whitespace"). Such a change is no one's work to lose."""
    if a is None or b is None:
        return a is b
    return a == b or _settled(a) == _settled(b)


def _settled(text: str) -> list[str]:
    lines = [line.rstrip(" \t\r") for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


CheckpointRow = tuple[str, Any, Any, Any, Any]  # path, existed, content, after_existed (None: unknown), after_content


def fold(rows: Iterable[CheckpointRow]) -> list[FileRewind]:
    """Per path, in turn order: the first before-state, the last after-state, and whether any turn found the
    file other than the previous turn left it."""
    out: dict[str, FileRewind] = {}
    for path, existed, content, after_existed, after_content in rows:
        before = (bool(existed), content if existed else None)
        after = before if after_existed is None else (bool(after_existed), after_content if after_existed else None)
        prior = out.get(str(path))
        between = prior is not None and (prior.between or prior.after_existed != before[0]
                                         or not same_text(prior.after_content, before[1]))
        first = before if prior is None else (prior.existed, prior.content)
        out[str(path)] = FileRewind(str(path), first[0], first[1], after[0], after[1], between)
    return sorted(out.values(), key=lambda f: f.path)


async def fork(conn: aiosqlite.Connection, source_id: str, new_id: str, *, keep: int | None, title: str) -> int:
    """Copy ``source_id``'s first ``keep`` active messages (all when None) and the checkpoints of the copied
    turns into a new session ``new_id`` linked to it; returns how many messages were copied."""
    columns = SELECT_MESSAGE.removeprefix("SELECT ").removesuffix(" FROM messages")
    rows = list(await conn.execute_fetchall(
        f"SELECT turn, {columns} FROM messages WHERE session_id = ? AND archived = 0 ORDER BY seq", (source_id,)))
    counted = list(await conn.execute_fetchall("SELECT turn_count FROM sessions WHERE id = ?", (source_id,)))
    turn_count = as_int(counted[0][0]) if counted else 0
    if keep is not None:
        rows = rows[:keep]
        turn_count = as_int(rows[-1][0]) if rows else 0
    stamp = now_iso()
    await conn.execute(
        "INSERT INTO sessions (id, cwd, title, model, system_prompt, created_at, updated_at, parent_id, turn_count, "
        "meta, forked_from) SELECT ?, cwd, ?, model, system_prompt, ?, ?, NULL, ?, meta, id FROM sessions "
        "WHERE id = ?", (new_id, title, stamp, stamp, turn_count, source_id))
    await conn.executemany(INSERT_MESSAGE, [encode_message(decode_message(r[1:]), new_id, as_int(r[0]), stamp)
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
    """Per path changed in ``turn`` or later: the state before the earliest such turn, the state after the latest
    (``fold``)."""
    rows = await conn.execute_fetchall(
        "SELECT path, existed, content, after_existed, after_content FROM checkpoints "
        "WHERE session_id = ? AND turn >= ? ORDER BY turn ASC, rowid ASC", (session_id, turn))
    return fold(tuple(r) for r in rows)


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
