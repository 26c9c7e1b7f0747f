"""Undo checkpoints: the content a file had before a turn first changed it.

A turn keeps one checkpoint per path: the one taken before its *first* edit of that path. Undoing
the last N turns restores, for every path they touched, the content from before the earliest of
those turns, and removes their checkpoints so an earlier turn can be undone next.
"""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite


@dataclass(frozen=True)
class Checkpoint:
    session_id: str
    turn: int
    path: str
    existed: bool  # False: the file did not exist before, so undo deletes it
    content: str | None
    created_at: str


async def save(conn: aiosqlite.Connection, session_id: str, turn: int, path: str, existed: bool,
               content: str | None, now: str) -> bool:
    """Record the pre-edit content; False when the turn already has a checkpoint for ``path``."""
    async with conn.execute(
        "INSERT OR IGNORE INTO checkpoints (session_id, turn, path, existed, content, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (session_id, turn, path, int(existed), content if existed else None, now),
    ) as cursor:
        return cursor.rowcount == 1


async def pop(conn: aiosqlite.Connection, session_id: str, turns: int) -> list[Checkpoint]:
    """Take the last ``turns`` turns' checkpoints: per path, the state before the earliest one."""
    if turns < 1:
        return []
    rows = await conn.execute_fetchall(
        "SELECT DISTINCT turn FROM checkpoints WHERE session_id = ? ORDER BY turn DESC LIMIT ?",
        (session_id, turns),
    )
    chosen = [int(r[0]) for r in rows]
    if not chosen:
        return []
    earliest = min(chosen)
    rows = await conn.execute_fetchall(
        "SELECT turn, path, existed, content, created_at FROM checkpoints "
        "WHERE session_id = ? AND turn >= ? ORDER BY turn ASC, rowid ASC",
        (session_id, earliest),
    )
    first: dict[str, Checkpoint] = {}
    for turn, path, existed, content, created_at in rows:
        if path not in first:
            first[path] = Checkpoint(session_id, int(turn), str(path), bool(existed), content, str(created_at))
    await conn.execute("DELETE FROM checkpoints WHERE session_id = ? AND turn >= ?", (session_id, earliest))
    return sorted(first.values(), key=lambda c: c.path)


async def turns(conn: aiosqlite.Connection, session_id: str) -> list[int]:
    """The turns that have checkpoints, newest first (what undo can still go back through)."""
    rows = await conn.execute_fetchall(
        "SELECT DISTINCT turn FROM checkpoints WHERE session_id = ? ORDER BY turn DESC", (session_id,))
    return [int(r[0]) for r in rows]
