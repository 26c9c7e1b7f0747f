"""Full-text search over the stored messages (FTS5; docs/sessions.md)."""

from __future__ import annotations

from typing import Any

import aiosqlite

from .records import SearchHit, fts_query


async def search_messages(conn: aiosqlite.Connection, query: str, *, session_id: str | None,
                          limit: int) -> list[SearchHit]:
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
    rows = await conn.execute_fetchall(sql, args)
    hits: dict[tuple[str, str], SearchHit] = {}
    for sid, seq, snippet, role, archived in rows:
        key = (str(sid), str(snippet))
        prior = hits.get(key)
        if prior is None or (prior.archived and not archived):
            hits[key] = SearchHit(str(sid), int(seq), str(snippet), str(role), bool(archived))
    return list(hits.values())[: max(1, limit)]
