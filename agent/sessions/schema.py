"""The session database schema and its forward migrations.

Each migration is a function that takes the connection inside an open transaction and brings
the schema from version N-1 to N. ``MIGRATIONS[0]`` is migration 1; migration 2 is a new
function appended to the list. ``migrate`` applies the missing ones in order, each in its own
transaction together with the version bump, so a crash mid-migration leaves the old version.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

import aiosqlite

from ..transcript import clean_content, content_ok
from ..types import Message, text_of

Migration = Callable[[aiosqlite.Connection], Awaitable[None]]


class StoreError(RuntimeError):
    """The session store cannot be used as asked; the message names the file and the way out."""


class SessionDeleted(StoreError):
    """The session was deleted from the store (by another process) while this one had it open."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id} was deleted (in another window or agentls process) while it was "
                         "open here, so this turn did not run and nothing was saved; start a new session")


class SchemaTooNew(StoreError):
    """The database was written by a newer agentls than this one."""


# Content kinds: a message's ``content`` key may be absent, None, a string, or JSON (a list).
CONTENT_ABSENT, CONTENT_NULL, CONTENT_TEXT, CONTENT_JSON = 0, 1, 2, 3

_V1 = [
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        cwd TEXT NOT NULL,
        title TEXT,
        model TEXT NOT NULL,
        system_prompt TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        parent_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        turn_count INTEGER NOT NULL DEFAULT 0,
        meta TEXT NOT NULL DEFAULT '{}'
    )""",
    "CREATE INDEX sessions_by_update ON sessions(updated_at DESC, id DESC)",
    "CREATE INDEX sessions_by_cwd ON sessions(cwd, updated_at DESC, id DESC)",
    """CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        turn INTEGER NOT NULL,
        role TEXT NOT NULL,
        content_kind INTEGER NOT NULL,
        content TEXT,
        tool_calls TEXT,
        tool_call_id TEXT,
        name TEXT,
        reasoning TEXT,
        reasoning_signature TEXT,
        meta TEXT,
        extra TEXT,
        created_at TEXT NOT NULL,
        archived INTEGER NOT NULL DEFAULT 0,
        UNIQUE (session_id, seq)
    )""",
    "CREATE INDEX messages_active ON messages(session_id, archived, seq)",
    "CREATE VIRTUAL TABLE messages_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')",
    # Rows go in through this view: its trigger numbers them (seq), indexes their text under the
    # message's rowid and touches the session, all inside the caller's one transaction.
    """CREATE VIEW message_input AS SELECT session_id, turn, role, content_kind, content, tool_calls,
        tool_call_id, name, reasoning, reasoning_signature, meta, extra, created_at,
        NULL AS search_text FROM messages""",
    """CREATE TRIGGER message_input_insert INSTEAD OF INSERT ON message_input BEGIN
        INSERT INTO messages (session_id, seq, turn, role, content_kind, content, tool_calls,
            tool_call_id, name, reasoning, reasoning_signature, meta, extra, created_at)
        VALUES (NEW.session_id,
            (SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = NEW.session_id),
            NEW.turn, NEW.role, NEW.content_kind, NEW.content, NEW.tool_calls, NEW.tool_call_id,
            NEW.name, NEW.reasoning, NEW.reasoning_signature, NEW.meta, NEW.extra, NEW.created_at);
        INSERT INTO messages_fts (rowid, body) SELECT last_insert_rowid(), NEW.search_text
            WHERE NEW.search_text IS NOT NULL AND NEW.search_text != '';
        UPDATE sessions SET updated_at = NEW.created_at, turn_count = max(turn_count, NEW.turn)
            WHERE id = NEW.session_id;
    END""",
    """CREATE TRIGGER messages_delete AFTER DELETE ON messages BEGIN
        DELETE FROM messages_fts WHERE rowid = OLD.id;
    END""",
    "CREATE VIRTUAL TABLE sessions_fts USING fts5(session_id UNINDEXED, title)",
    """CREATE TRIGGER sessions_title_insert AFTER INSERT ON sessions WHEN NEW.title IS NOT NULL BEGIN
        INSERT INTO sessions_fts (session_id, title) VALUES (NEW.id, NEW.title);
    END""",
    """CREATE TRIGGER sessions_title_update AFTER UPDATE OF title ON sessions BEGIN
        DELETE FROM sessions_fts WHERE session_id = OLD.id;
        INSERT INTO sessions_fts (session_id, title) SELECT NEW.id, NEW.title WHERE NEW.title IS NOT NULL;
    END""",
    """CREATE TRIGGER sessions_delete AFTER DELETE ON sessions BEGIN
        DELETE FROM sessions_fts WHERE session_id = OLD.id;
    END""",
    """CREATE TABLE checkpoints (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn INTEGER NOT NULL,
        path TEXT NOT NULL,
        existed INTEGER NOT NULL,
        content TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (session_id, turn, path)
    )""",
]


async def migration_1(conn: aiosqlite.Connection) -> None:
    """Sessions, messages (with FTS5 over their text), session titles in FTS5, checkpoints."""
    for statement in _V1:
        await conn.execute(statement)


async def migration_2(conn: aiosqlite.Connection) -> None:
    """Leases: which process is driving a session right now (``agentls.agent.sessions.lease``)."""
    from .lease import SCHEMA

    await conn.execute(SCHEMA)


async def migration_3(conn: aiosqlite.Connection) -> None:
    """Fork links and the state each checkpointed turn left its file in (``agentls.agent.sessions.tree``)."""
    from .tree import migration_3 as tree_migration

    await tree_migration(conn)


async def migration_4(conn: aiosqlite.Connection) -> None:
    """Child sessions (``delegate_task``, docs/loop.md §9.9): the tool call of the parent that started one. A row
    with it set is a subagent's session, listed under its parent (``parent_id``) and not at the top level."""
    await conn.execute("ALTER TABLE sessions ADD COLUMN parent_tool_call_id TEXT")
    await conn.execute("CREATE INDEX sessions_by_parent ON sessions(parent_id, created_at)")


MIGRATIONS: tuple[Migration, ...] = (migration_1, migration_2, migration_3, migration_4)


async def current_version(conn: aiosqlite.Connection) -> int:
    await conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    rows = list(await conn.execute_fetchall("SELECT max(version) FROM schema_version"))
    value = rows[0][0] if rows else None
    return int(value) if value is not None else 0


async def migrate(conn: aiosqlite.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring the database to ``len(migrations)``; returns the version it ends at.

    The connection must be in autocommit mode (``isolation_level=None``). A database newer than
    the list raises ``SchemaTooNew`` and is left untouched.
    """
    target = len(migrations)
    await conn.execute("BEGIN IMMEDIATE")
    try:
        version = await current_version(conn)
        await conn.execute("COMMIT")
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    if version > target:
        raise SchemaTooNew(f"the session database is at schema version {version}; this agentls knows "
                           f"up to {target}. Upgrade agentls or point AGENTLS_DATA_DIR elsewhere.")
    while version < target:
        await conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated in the meantime: re-read under the write lock.
            version = await current_version(conn)
            if version < target:
                await migrations[version](conn)
                version += 1
                await conn.execute("DELETE FROM schema_version")
                await conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
            await conn.execute("COMMIT")
        except BaseException:
            await conn.execute("ROLLBACK")
            raise
    return version


# -- rows <-> messages -------------------------------------------------------------------------

MESSAGE_COLUMNS = ("session_id", "turn", "role", "content_kind", "content", "tool_calls", "tool_call_id",
                   "name", "reasoning", "reasoning_signature", "meta", "extra", "created_at", "search_text")
INSERT_MESSAGE = (f"INSERT INTO message_input ({', '.join(MESSAGE_COLUMNS)}) "
                  f"VALUES ({', '.join('?' for _ in MESSAGE_COLUMNS)})")
SELECT_MESSAGE = ("SELECT role, content_kind, content, tool_calls, tool_call_id, name, reasoning, "
                  "reasoning_signature, meta, extra FROM messages")
_KNOWN_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name", "reasoning",
                         "reasoning_signature", "meta"})
_EXTRA_KEYS: dict[str, type] = {"provider_data": dict}  # the message's other fields (agent/types.py Message)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def search_text(message: Message) -> str:
    """The text FTS5 indexes for a message: its content and its tool calls' names and arguments."""
    parts = [text_of(message)]
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        parts.append(f"{fn.get('name', '')} {fn.get('arguments', '')}")
    return "\n".join(p for p in parts if p)


def encode_message(message: Message, session_id: str, turn: int, now: str) -> tuple[Any, ...]:
    """The ``message_input`` row for a message (in ``MESSAGE_COLUMNS`` order)."""
    if "content" not in message:
        kind, content = CONTENT_ABSENT, None
    else:
        raw = message["content"]
        if raw is None:
            kind, content = CONTENT_NULL, None
        elif isinstance(raw, str):
            kind, content = CONTENT_TEXT, raw
        else:
            kind, content = CONTENT_JSON, _dumps(raw)
    calls = message.get("tool_calls")
    meta = message.get("meta")
    extra = {k: v for k, v in message.items() if k not in _KNOWN_KEYS}
    return (
        session_id, turn, message.get("role", ""), kind, content,
        None if calls is None else _dumps(calls),
        message.get("tool_call_id"), message.get("name"), message.get("reasoning"),
        message.get("reasoning_signature"),
        None if meta is None else _dumps(meta),
        _dumps(extra) if extra else None,
        now, search_text(message),
    )


def _json(raw: Any, column: str, damage: list[str], want: type | None = None) -> Any:
    """A JSON column's value, or None (and a note in ``damage``) when it is not JSON of the wanted type."""
    try:
        value = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        damage.append(f"its {column} column is not JSON")
        return None
    if want is not None and not isinstance(value, want):
        damage.append(f"its {column} column holds {type(value).__name__}, not {want.__name__}")
        return None
    return value


def decode_message(row: Sequence[Any], damage: list[str] | None = None) -> Message:
    """The message a ``SELECT_MESSAGE`` row stores, exactly as it was appended. A damaged column (not JSON,
    the wrong type, NULL where text belongs) is left out or kept as text, and said in ``damage``; the
    transcript's repair (agent/transcript.py) then makes the whole valid again."""
    damage = [] if damage is None else damage
    role, kind, content, calls, call_id, name, reasoning, signature, meta, extra = row
    if not isinstance(role, str):
        damage.append(f"its role is {role!r}")
        role = "unknown"  # dropped by the repair
    message: dict[str, Any] = {"role": role}
    if kind == CONTENT_NULL:
        message["content"] = None
    elif kind == CONTENT_TEXT:
        message["content"] = content if isinstance(content, str) or content is None else str(content)
    elif kind == CONTENT_JSON:
        value = _json(content, "content", damage, list)
        if value is not None and not content_ok(value, role):
            damage.append("its content holds parts of an unknown type or shape (left out)")
            value = clean_content(value, role)
        message["content"] = value if value is not None else (content if isinstance(content, str) else "")
    elif content is not None:
        damage.append(f"its content kind is {kind!r}")
        message["content"] = content if isinstance(content, str) else str(content)
    if calls is not None:
        value = _json(calls, "tool_calls", damage, list)
        if value is not None:
            message["tool_calls"] = value
    for key, value in (("tool_call_id", call_id), ("name", name), ("reasoning", reasoning),
                       ("reasoning_signature", signature)):
        if value is not None:
            if isinstance(value, str):
                message[key] = value
            else:
                damage.append(f"its {key} is {type(value).__name__}, not text")
    if meta is not None and (value := _json(meta, "meta", damage, dict)) is not None:
        message["meta"] = value
    if extra is not None and (value := _json(extra, "extra", damage, dict)) is not None:
        kept = {k: v for k, v in value.items() if k in _EXTRA_KEYS and isinstance(v, _EXTRA_KEYS[k])}
        if len(kept) < len(value):
            damage.append(f"its extra column holds unknown or mistyped keys {sorted(set(value) - set(kept))} "
                          "(left out)")
        message.update(kept)
    return cast(Message, message)
