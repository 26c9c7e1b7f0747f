"""MCP resources named in a prompt, read and embedded before the turn.

Two forms: ``@<server>:<uri>`` in the text (Claude Code's syntax, e.g. ``@docs:file:///guide.md``), and an
ACP ``resource_link`` whose URI is a resource one of the session's servers lists. Each becomes an
embedded ``resource`` block after the text; one that cannot be read becomes a short note instead.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .connection import ServerConnection
    from .manager import McpManager

MENTION = re.compile(r"(?<![\w@])@(?P<server>[A-Za-z0-9_.-]+):(?P<uri>[A-Za-z][A-Za-z0-9+.-]*:[^\s)\]>\"']+)")
MAX_MENTIONS = 20


async def _read(conn: ServerConnection, uri: str) -> list[dict[str, Any]]:
    out = await conn.read_resource(uri)
    if out.is_error:
        return [{"type": "text", "text": f"[@{conn.spec.name}:{uri} could not be read: {out.text}]"}]
    return [item["content"] for item in out.content if isinstance(item.get("content"), dict)]


def _owner(manager: McpManager, uri: str) -> ServerConnection | None:
    for conn in manager.connections:
        if any(str(r.uri) == uri for r in conn.resources):
            return conn
    return None


async def expand(manager: McpManager | None, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``blocks`` with the MCP resources they mention embedded (unchanged when there are none)."""
    if manager is None or not manager.connections:
        return blocks
    wanted: list[tuple[ServerConnection, str]] = []
    out: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            for match in MENTION.finditer(str(block.get("text", ""))):
                conn = manager.connection(match["server"])
                if conn is not None and (conn, match["uri"]) not in wanted:
                    wanted.append((conn, match["uri"]))
        elif kind == "resource_link" and not str(block.get("uri", "")).startswith("file:"):
            conn = _owner(manager, str(block.get("uri")))
            if conn is not None:
                wanted.append((conn, str(block["uri"])))
                continue
        out.append(block)
    if not wanted:
        return blocks
    for conn, uri in wanted[:MAX_MENTIONS]:
        out.extend(await _read(conn, uri))
    return out
