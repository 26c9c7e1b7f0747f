"""The session store: SQLite through aiosqlite (WAL, FTS5, forward migrations).

Every write is one ``BEGIN IMMEDIATE ... COMMIT`` transaction, committed before the method
returns, so a process killed at any moment leaves each round either wholly stored or absent.
One store holds one connection; its operations are serialized with a lock so one task's
transaction never interleaves with another's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import aiosqlite
import anyio
import platformdirs

from . import checkpoints as cp
from . import lease, tree
from .search import search_messages
from .checkpoints import Checkpoint
from .lease import LeaseHolder, SessionBusy
from .opening import StoreReadOnly, open_database, read_only_error
from .records import (
    as_int,
    SearchHit,
    SessionRecord,
    decode_cursor,
    encode_cursor,
    fts_query,
    now_iso,
    record,
    transaction,
)
from .schema import (
    INSERT_MESSAGE,
    SELECT_MESSAGE,
    StoreError,
    decode_message,
    encode_message,
    migrate,
)
from ..types import Message

log = logging.getLogger("agentls.sessions")

__all__ = ["SearchHit", "SessionBusy", "SessionRecord", "StoreError", "StoreReadOnly", "fts_query", "now_iso"]

DB_NAME = "sessions.db"
MEMORY = ":memory:"  # a private in-memory database (tests, throwaway agents): no WAL, gone on close
DATA_DIR_ENV = "AGENTLS_DATA_DIR"
_SESSION_COLUMNS = ("id, cwd, title, model, system_prompt, created_at, updated_at, parent_id, "
                    "turn_count, meta, parent_tool_call_id")

def default_db_path() -> Path:
    """``$AGENTLS_DATA_DIR/sessions.db`` when set, else the platform's user data dir."""
    override = os.environ.get(DATA_DIR_ENV)
    base = Path(override).expanduser() if override else Path(platformdirs.user_data_dir("agentls"))
    return base / DB_NAME


class StoreClosed(RuntimeError):
    """The store is not open (call ``open()`` or use ``async with``)."""


class SessionStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: aiosqlite.Connection | None = None
        self._lock = anyio.Lock()
        self.read_only = False
        self.notices: list[str] = []  # what opening had to do (a damaged file moved aside, read-only)
        self.owner = uuid.uuid4().hex  # this store's identity in session leases
        self._leased: set[str] = set()
        self._heartbeat: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Open (and create, migrate, repair) the database; ``StoreError`` names the file when it cannot be
        used. A damaged file is moved aside and a fresh one opened (see ``notices``); a read-only one is
        opened read-only (``read_only``)."""
        if self._conn is not None:
            return
        if str(self.path) == MEMORY:
            conn = await aiosqlite.connect(MEMORY, isolation_level=None)
            try:
                await conn.execute("PRAGMA foreign_keys=ON")
                await migrate(conn)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await conn.close()
                raise
            self._conn = conn
            return
        opened = await open_database(self.path)
        self.read_only = opened.read_only
        for notice in opened.notices:
            log.warning("%s", notice)
        self.notices.extend(opened.notices)
        self._conn = opened.conn

    async def close(self) -> None:
        conn = self._conn
        if conn is not None and self._leased:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                for session_id in list(self._leased):
                    await self.release_lease(session_id)
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            self._heartbeat = None
        self._conn = None
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
            with self._named_errors():
                yield self._require()

    @contextmanager
    def _named_errors(self) -> Iterator[None]:
        """SQLite errors as ``StoreError`` naming the database file (no bare traceback for the client)."""
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"the session store {self.path} failed: {exc}") from exc

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[aiosqlite.Connection]:
        """One IMMEDIATE transaction: committed when the block ends, rolled back if it raises."""
        if self.read_only:
            raise read_only_error(self.path)
        async with self._lock:
            with self._named_errors():
                async with transaction(self._require()) as conn:
                    yield conn

    # -- sessions ------------------------------------------------------------------------------

    async def create_session(self, *, session_id: str, cwd: str | Path, model: str, system_prompt: str,
                             title: str | None = None, parent_id: str | None = None, meta: dict[str, Any] | None = None,
                             parent_tool_call_id: str | None = None) -> SessionRecord:
        """``parent_tool_call_id``: a subagent's session, started by that ``delegate_task`` call of ``parent_id``."""
        stamp = now_iso()
        row = (session_id, str(cwd), title, model, system_prompt, stamp, stamp, parent_id, 0,
               json.dumps(meta or {}), parent_tool_call_id)
        async with self._write() as conn:
            await conn.execute(f"INSERT INTO sessions ({_SESSION_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)", row)
        return record(row)

    async def get_session(self, session_id: str) -> SessionRecord | None:
        async with self._read() as conn:
            rows = list(await conn.execute_fetchall(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)))
        return record(rows[0]) if rows else None

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

    async def delete_session(self, session_id: str) -> list[str]:
        """The session and its child sessions, their messages (and index entries) and checkpoints; the ids removed."""
        async with self._write() as conn:
            return await tree.delete(conn, session_id)

    async def fork_session(self, source_id: str, new_id: str, *, keep: int | None = None, title: str) -> int:
        """A new session with the first ``keep`` active messages of ``source_id`` (all when None), linked to it."""
        async with self._write() as conn:
            return await tree.fork(conn, source_id, new_id, keep=keep, title=title)

    async def fork_origin(self, session_id: str) -> str | None:
        async with self._read() as conn:
            return await tree.origin(conn, session_id)

    async def list_sessions(self, *, cwd: str | Path | None = None, query: str | None = None, limit: int = 50,
                            cursor: str | None = None, children: bool = False) -> tuple[list[SessionRecord], str | None]:
        """Sessions newest first (by ``updated_at``), a page at a time; the cursor is opaque. ``query`` keeps the
        sessions whose messages or title match it (full-text search). Subagents' sessions are left out unless
        ``children`` (they are listed under their parent: ``child_sessions``)."""
        where: list[str] = [] if children else ["parent_tool_call_id IS NULL"]
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
            updated_at, last_id = decode_cursor(cursor)
            where.append("(updated_at < ? OR (updated_at = ? AND id < ?))")
            args += [updated_at, updated_at, last_id]
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC, id DESC LIMIT ?"
        args.append(max(1, limit) + 1)
        async with self._read() as conn:
            rows = list(await conn.execute_fetchall(sql, args))
        records = [record(r) for r in rows[: max(1, limit)]]
        more = len(rows) > max(1, limit)
        return records, (encode_cursor(records[-1].updated_at, records[-1].id) if more else None)

    async def child_sessions(self, parent_id: str) -> list[SessionRecord]:
        """The subagents' sessions a session started (``delegate_task``), oldest first."""
        async with self._read() as conn:
            return [record(r) for r in await conn.execute_fetchall(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE parent_id = ? AND parent_tool_call_id IS NOT NULL "
                "ORDER BY created_at, id", (parent_id,))]

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
        if self.read_only:
            raise read_only_error(self.path)
        async with self._lock:
            with self._named_errors():
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
                turn = as_int(rows[0][0]) if rows else 0
            encoded = [encode_message(m, session_id, turn, stamp) for m in messages]
            await conn.execute("UPDATE messages SET archived = 1 WHERE session_id = ? AND archived = 0",
                               (session_id,))
            await conn.executemany(INSERT_MESSAGE, encoded)

    async def load_messages(self, session_id: str) -> list[Message]:
        """The active messages in order, each exactly as it was stored. A damaged row (a column that is not
        JSON or not of its type) is decoded as far as it goes and logged, naming the session and the row; the
        loader's repair (``transcript.settled``) makes the transcript valid and saves it."""
        async with self._read() as conn:
            rows = await conn.execute_fetchall(
                f"{SELECT_MESSAGE} WHERE session_id = ? AND archived = 0 ORDER BY seq", (session_id,))
        out = []
        for n, row in enumerate(rows, start=1):
            damage: list[str] = []
            out.append(decode_message(row, damage))
            if damage:
                log.warning("session %s: stored message %d is damaged (%s); what could be read of it is kept and "
                            "the transcript repaired", session_id, n, "; ".join(damage))
        return out

    async def count_messages(self, session_id: str) -> int:
        """How many active messages the session has (to reconcile after a cancelled append)."""
        async with self._read() as conn:
            rows = list(await conn.execute_fetchall(
                "SELECT count(*) FROM messages WHERE session_id = ? AND archived = 0", (session_id,)))
        return int(rows[0][0])

    async def search(self, query: str, *, session_id: str | None = None, limit: int = 20) -> list[SearchHit]:
        """Messages matching ``query`` (any text is safe), best first, one hit per distinct text."""
        async with self._read() as conn:
            return await search_messages(conn, query, session_id=session_id, limit=limit)

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

    async def record_after(self, session_id: str, turn: int, path: str, content: str | None) -> None:
        """What ``turn``'s edit left in ``path`` (None: deleted), so a rewind can see a later edit by someone else."""
        async with self._write() as conn:
            await tree.record_after(conn, session_id, turn, path, content)

    async def rewind_files(self, session_id: str, turn: int, *, drop: bool = False) -> list[tree.FileRewind]:
        """Every file changed in ``turn`` or later, before and after; ``drop`` removes those checkpoints."""
        async with self._write() as conn:
            files = await tree.since(conn, session_id, turn)
            if drop:
                await tree.drop_since(conn, session_id, turn)
            return files

    async def checkpoint_turns(self, session_id: str) -> list[int]:
        async with self._read() as conn:
            return await cp.turns(conn, session_id)

    # -- leases --------------------------------------------------------------------------------

    async def acquire_lease(self, session_id: str) -> None:
        """Drive ``session_id`` from this store: ``SessionBusy`` when another live process does, ``StoreReadOnly``
        when nothing can be saved. Renewed in the background until ``release_lease`` (or ``close``)."""
        async with self._write() as conn:
            await lease.acquire(conn, session_id, self.owner)
        self._leased.add(session_id)
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.ensure_future(self._beat())

    async def release_lease(self, session_id: str) -> None:
        self._leased.discard(session_id)
        if not self._leased and self._heartbeat is not None:
            self._heartbeat.cancel()  # nothing left to renew
            self._heartbeat = None
        if self._conn is None or self.read_only:
            return
        async with self._write() as conn:
            await lease.release(conn, session_id, self.owner)

    async def lease_holder(self, session_id: str) -> LeaseHolder | None:
        """The live holder of the session's lease when it is another process's, else None."""
        async with self._read() as conn:
            holder = await lease.holder(conn, session_id)
        if holder is None or holder.owner == self.owner or not holder.alive():
            return None
        return holder

    async def revision(self, session_id: str) -> tuple[int, int]:
        """``(active messages, newest row id)``: changes whenever anyone appends or rewrites the session."""
        async with self._read() as conn:
            rows = list(await conn.execute_fetchall(
                "SELECT count(*), coalesce(max(id), 0) FROM messages WHERE session_id = ? AND archived = 0",
                (session_id,)))
        return int(rows[0][0]), int(rows[0][1])

    async def _beat(self) -> None:
        while self._leased and self._conn is not None:
            await asyncio.sleep(lease.HEARTBEAT_EVERY)
            leased = sorted(self._leased)
            if not leased or self._conn is None:
                return
            try:
                async with self._write() as conn:
                    await lease.renew(conn, leased, self.owner)
            except Exception as exc:  # the next beat tries again; a lease lasts LEASE_TTL
                log.warning("renewing the session leases in %s failed: %s", self.path, exc)
