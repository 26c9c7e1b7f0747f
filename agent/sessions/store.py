"""The session store: SQLite through aiosqlite (WAL, FTS5, forward migrations).

Every write is one ``BEGIN IMMEDIATE ... COMMIT`` transaction, committed before the method
returns, so a process killed at any moment leaves each round either wholly stored or absent.
One store holds one connection; its operations are serialized with a lock so one task's
transaction never interleaves with another's.
"""

from __future__ import annotations

import asyncio

import base64
import binascii
import json
import os
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import aiosqlite
import anyio
import platformdirs

from agentls.agent.sessions import checkpoints as cp
from agentls.agent.sessions.checkpoints import Checkpoint
from agentls.agent.sessions.schema import INSERT_MESSAGE, SELECT_MESSAGE, decode_message, encode_message, migrate
from agentls.agent.types import Message

DB_NAME = "sessions.db"
MEMORY = ":memory:"  # a private in-memory database (tests, throwaway agents): no WAL, gone on close
DATA_DIR_ENV = "AGENTLS_DATA_DIR"
BUSY_TIMEOUT_MS = 5000
_SESSION_COLUMNS = ("id, cwd, title, model, system_prompt, created_at, updated_at, parent_id, "
                    "turn_count, meta")
_TERM_RE = re.compile(r"\w", re.UNICODE)


def default_db_path() -> Path:
    """``$AGENTLS_DATA_DIR/sessions.db`` when set, else the platform's user data dir."""
    override = os.environ.get(DATA_DIR_ENV)
    base = Path(override).expanduser() if override else Path(platformdirs.user_data_dir("agentls"))
    return base / DB_NAME


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def fts_query(text: str) -> str | None:
    """A user's search text as a safe FTS5 query: every word a quoted phrase, all required.

    Operators, parentheses and stray quotes lose their meaning, so no input raises a syntax
    error. None when nothing searchable is left.
    """
    terms = [t.replace('"', '""') for t in text.split() if _TERM_RE.search(t)]
    return " ".join(f'"{t}"' for t in terms) or None


@dataclass(frozen=True)
class SessionRecord:
    id: str
    cwd: str
    title: str | None
    model: str
    system_prompt: str
    created_at: str
    updated_at: str
    parent_id: str | None
    turn_count: int
    meta: dict[str, Any]


@dataclass(frozen=True)
class SearchHit:
    session_id: str
    seq: int
    snippet: str
    role: str
    archived: bool  # the message was compacted away and survives only in the history


def _record(row: Sequence[Any]) -> SessionRecord:
    sid, cwd, title, model, prompt, created, updated, parent, turns, meta = row
    return SessionRecord(str(sid), str(cwd), title, str(model), str(prompt), str(created), str(updated),
                         parent, int(turns), json.loads(meta) if meta else {})


def _encode_cursor(updated_at: str, session_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([updated_at, session_id]).encode()).decode()


def _decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        updated_at, session_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, TypeError, binascii.Error) as exc:
        raise ValueError(f"not a session list cursor: {cursor!r}") from exc
    return str(updated_at), str(session_id)


class StoreClosed(RuntimeError):
    """The store is not open (call ``open()`` or use ``async with``)."""


class SessionStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: aiosqlite.Connection | None = None
        self._lock = anyio.Lock()

    async def open(self) -> None:
        if self._conn is not None:
            return
        memory = str(self.path) == MEMORY
        if not memory:
            await anyio.Path(self.path.parent).mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(MEMORY if memory else self.path, isolation_level=None)
        try:
            rows = list(await conn.execute_fetchall("PRAGMA journal_mode=WAL"))
            if not memory and (not rows or str(rows[0][0]).lower() != "wal"):
                raise RuntimeError(f"cannot put {self.path} in WAL mode (got {rows})")
            await conn.execute("PRAGMA synchronous=NORMAL")
            await conn.execute("PRAGMA foreign_keys=ON")
            await conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            await migrate(conn)
            if not memory:
                await anyio.Path(self.path).chmod(0o600)  # transcripts are private
        except BaseException:
            with anyio.CancelScope(shield=True):
                await conn.close()
            raise
        self._conn = conn

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with anyio.CancelScope(shield=True):
                await conn.close()

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    def _require(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise StoreClosed(f"the session store {self.path} is not open")
        return self._conn

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            yield self._require()

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[aiosqlite.Connection]:
        """One IMMEDIATE transaction: committed when the block ends, rolled back if it raises."""
        async with self._lock:
            conn = self._require()
            try:
                # BEGIN runs to its end even if this task is cancelled meanwhile (a cancel landing there
                # would leave the shared connection inside a transaction, failing every later write of every
                # session); the except below then rolls it back.
                begin = asyncio.ensure_future(conn.execute("BEGIN IMMEDIATE"))
                try:
                    await asyncio.shield(begin)
                except asyncio.CancelledError:
                    await asyncio.wait([begin])
                    raise
                yield conn
            except BaseException:
                with anyio.CancelScope(shield=True):
                    if conn.in_transaction:
                        await conn.execute("ROLLBACK")
                raise
            try:
                await conn.execute("COMMIT")
            except BaseException:
                with anyio.CancelScope(shield=True):
                    if conn.in_transaction:
                        await conn.execute("ROLLBACK")
                raise

    # -- sessions ------------------------------------------------------------------------------

    async def create_session(self, *, session_id: str, cwd: str | Path, model: str, system_prompt: str,
                             title: str | None = None, parent_id: str | None = None,
                             meta: dict[str, Any] | None = None) -> SessionRecord:
        stamp = now_iso()
        row = (session_id, str(cwd), title, model, system_prompt, stamp, stamp, parent_id, 0,
               json.dumps(meta or {}))
        async with self._write() as conn:
            await conn.execute(f"INSERT INTO sessions ({_SESSION_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", row)
        return _record(row)

    async def get_session(self, session_id: str) -> SessionRecord | None:
        async with self._read() as conn:
            rows = list(await conn.execute_fetchall(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)))
        return _record(rows[0]) if rows else None

    async def update_session(self, session_id: str, *, title: str | None = None, model: str | None = None,
                             turn_count: int | None = None, meta: dict[str, Any] | None = None) -> None:
        """Change the given fields (None leaves a field alone; ``meta`` replaces the whole dict)."""
        sets = ["updated_at = ?"]
        args: list[Any] = [now_iso()]
        for column, value in (("title", title), ("model", model), ("turn_count", turn_count)):
            if value is not None:
                sets.append(f"{column} = ?")
                args.append(value)
        if meta is not None:
            sets.append("meta = ?")
            args.append(json.dumps(meta))
        async with self._write() as conn:
            await conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", (*args, session_id))

    async def delete_session(self, session_id: str) -> None:
        """The session, its messages (and their index entries) and its checkpoints."""
        async with self._write() as conn:
            await conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            await conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    async def list_sessions(self, *, cwd: str | Path | None = None, query: str | None = None, limit: int = 50,
                            cursor: str | None = None) -> tuple[list[SessionRecord], str | None]:
        """Sessions newest first (by ``updated_at``), a page at a time; the cursor is opaque.

        ``query`` keeps the sessions whose messages or title match it (full-text search).
        """
        where: list[str] = []
        args: list[Any] = []
        if cwd is not None:
            where.append("cwd = ?")
            args.append(str(cwd))
        if query is not None:
            match = fts_query(query)
            if match is None:
                return [], None
            where.append("(id IN (SELECT m.session_id FROM messages_fts f JOIN messages m ON m.id = f.rowid "
                         "WHERE messages_fts MATCH ?) OR id IN (SELECT session_id FROM sessions_fts "
                         "WHERE sessions_fts MATCH ?))")
            args += [match, match]
        if cursor is not None:
            updated_at, last_id = _decode_cursor(cursor)
            where.append("(updated_at < ? OR (updated_at = ? AND id < ?))")
            args += [updated_at, updated_at, last_id]
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC, id DESC LIMIT ?"
        args.append(max(1, limit) + 1)
        async with self._read() as conn:
            rows = list(await conn.execute_fetchall(sql, args))
        records = [_record(r) for r in rows[: max(1, limit)]]
        more = len(rows) > max(1, limit)
        return records, (_encode_cursor(records[-1].updated_at, records[-1].id) if more else None)

    # -- messages ------------------------------------------------------------------------------

    async def append_messages(self, session_id: str, messages: Sequence[Message], *, turn: int) -> None:
        """Append one round in one transaction, committed before this returns."""
        if not messages:
            return
        stamp = now_iso()
        rows = [encode_message(m, session_id, turn, stamp) for m in messages]
        # One multi-row INSERT: a single statement is atomic in autocommit mode, so the round lands whole
        # with one trip to the SQLite thread instead of BEGIN / executemany / COMMIT.
        width = len(rows[0])
        sql = INSERT_MESSAGE.split(" VALUES ")[0] + " VALUES " + ",".join(
            ["(" + ",".join("?" * width) + ")"] * len(rows))
        async with self._lock:
            await self._require().execute(sql, [value for row in rows for value in row])

    async def replace_messages(self, session_id: str, messages: Sequence[Message], *,
                               turn: int | None = None) -> None:
        """Archive the active messages and store ``messages`` instead, atomically (compression).

        The archived rows stay in the database (and in search); the session id does not change.
        ``turn`` defaults to the session's current turn count.
        """
        stamp = now_iso()
        async with self._write() as conn:
            if turn is None:
                rows = list(await conn.execute_fetchall(
                    "SELECT turn_count FROM sessions WHERE id = ?", (session_id,)))
                turn = int(rows[0][0]) if rows else 0
            encoded = [encode_message(m, session_id, turn, stamp) for m in messages]
            await conn.execute("UPDATE messages SET archived = 1 WHERE session_id = ? AND archived = 0",
                               (session_id,))
            await conn.executemany(INSERT_MESSAGE, encoded)

    async def load_messages(self, session_id: str) -> list[Message]:
        """The active messages in order, each exactly as it was stored."""
        async with self._read() as conn:
            rows = await conn.execute_fetchall(
                f"{SELECT_MESSAGE} WHERE session_id = ? AND archived = 0 ORDER BY seq", (session_id,))
        return [decode_message(r) for r in rows]

    async def count_messages(self, session_id: str) -> int:
        """How many active messages the session has (to reconcile after a cancelled append)."""
        async with self._read() as conn:
            rows = list(await conn.execute_fetchall(
                "SELECT count(*) FROM messages WHERE session_id = ? AND archived = 0", (session_id,)))
        return int(rows[0][0])

    async def search(self, query: str, *, session_id: str | None = None, limit: int = 20) -> list[SearchHit]:
        """Messages matching ``query`` (any text is safe), best first, one hit per distinct text."""
        match = fts_query(query)
        if match is None:
            return []
        sql = ("SELECT m.session_id, m.seq, snippet(messages_fts, 0, '[', ']', '...', 12), m.role, "
               "m.archived FROM messages_fts f JOIN messages m ON m.id = f.rowid "
               "WHERE messages_fts MATCH ?")
        args: list[Any] = [match]
        if session_id is not None:
            sql += " AND m.session_id = ?"
            args.append(session_id)
        sql += " ORDER BY f.rank, m.archived, m.seq DESC LIMIT ?"
        args.append(max(1, limit) * 4)
        async with self._read() as conn:
            rows = await conn.execute_fetchall(sql, args)
        hits: dict[tuple[str, str], SearchHit] = {}
        for sid, seq, snippet, role, archived in rows:
            key = (str(sid), str(snippet))
            prior = hits.get(key)
            if prior is None or (prior.archived and not archived):
                hits[key] = SearchHit(str(sid), int(seq), str(snippet), str(role), bool(archived))
        return list(hits.values())[: max(1, limit)]

    # -- undo checkpoints ----------------------------------------------------------------------

    async def save_checkpoint(self, session_id: str, turn: int, path: str, existed: bool,
                              content: str | None) -> bool:
        """Keep ``path``'s content from before ``turn`` first edits it; False if already kept."""
        async with self._write() as conn:
            return await cp.save(conn, session_id, turn, path, existed, content, now_iso())

    async def pop_checkpoints(self, session_id: str, turns: int = 1) -> list[Checkpoint]:
        """For the last ``turns`` turns with checkpoints: each path's content before the earliest
        of them. Those checkpoints are removed, so undo can go further back next time."""
        async with self._write() as conn:
            return await cp.pop(conn, session_id, turns)

    async def checkpoint_turns(self, session_id: str) -> list[int]:
        async with self._read() as conn:
            return await cp.turns(conn, session_id)
