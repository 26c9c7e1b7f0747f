"""Rows of the session store as values: sessions, search hits, list cursors; the write transaction."""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiosqlite
import anyio

log = logging.getLogger(__name__)
_TERM_RE = re.compile(r"\w", re.UNICODE)


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
    parent_tool_call_id: str | None = None  # a subagent's session: the parent's delegate_task call


@dataclass(frozen=True)
class SearchHit:
    session_id: str
    seq: int
    snippet: str
    role: str
    archived: bool  # the message was compacted away and survives only in the history


def as_int(value: Any, default: int = 0) -> int:
    """A stored number, or ``default`` when the column holds something else (a damaged row)."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


def _text(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else str(value)


def record(row: Sequence[Any]) -> SessionRecord:
    """A ``sessions`` row as a value. A damaged field (``meta`` that is not a JSON object, ``turn_count`` that is
    not a number) is taken as its default (``{}``, 0) and logged, so one bad row never hides the others."""
    sid, cwd, title, model, prompt, created, updated, parent, turns, meta, *rest = row
    damaged = []
    turn_count = as_int(turns, -1)
    if turn_count < 0:
        damaged.append("turn_count is not a number")
        turn_count = 0
    try:
        decoded = json.loads(meta) if meta else {}
    except (TypeError, ValueError, RecursionError):
        decoded = None
    if not isinstance(decoded, dict):
        damaged.append("meta is not a JSON object")
        decoded = {}
    if damaged:
        log.warning("session %s: its stored row is damaged (%s); read with defaults", sid, "; ".join(damaged))
    return SessionRecord(str(sid), str(cwd or ""), _text(title), str(model or ""), str(prompt or ""), str(created),
                         str(updated), _text(parent), turn_count, decoded, _text(rest[0]) if rest else None)


def encode_cursor(updated_at: str, session_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([updated_at, session_id]).encode()).decode()


class BadCursor(ValueError):
    """A list cursor that no listing handed out."""


def decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        updated_at, session_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, TypeError, binascii.Error) as exc:
        raise BadCursor(f"not a session list cursor: {cursor!r}") from exc
    return str(updated_at), str(session_id)


@asynccontextmanager
async def transaction(conn: aiosqlite.Connection) -> AsyncIterator[aiosqlite.Connection]:
    """One ``BEGIN IMMEDIATE ... COMMIT`` on ``conn``, rolled back if the block raises."""
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
