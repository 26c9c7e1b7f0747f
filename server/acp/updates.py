"""Core updates to ``session/update`` notifications.

The core already speaks ACP ``SessionUpdate`` dicts, so this validates each one with the SDK's model and
forwards it. ``compaction_update`` (the session-compaction RFD, not in schema v1) goes out as is only to
clients that declared ``session.compaction``; the others get a short ``agent_message_chunk`` instead.
"""

from __future__ import annotations

import logging
from typing import Any

from acp.interfaces import Client
from acp.schema import SessionNotification
from pydantic import ValidationError

from .capabilities import ClientCaps
from .stdio import LineTransport

log = logging.getLogger("agentls.acp")


def compaction_text(update: dict[str, Any]) -> str | None:
    """What a client without ``session.compaction`` sees for a ``compaction_update`` (None: nothing)."""
    status = update.get("status")
    report = (update.get("_meta") or {}).get("agentls") or {}
    if status == "completed":
        before, after = report.get("tokensBefore"), report.get("tokensAfter")
        msgs_before, msgs_after = report.get("messagesBefore"), report.get("messagesAfter")
        if isinstance(before, int) and isinstance(after, int):
            return (f"\n_(context compacted: {msgs_before} → {msgs_after} messages, "
                    f"~{before:,} → ~{after:,} tokens)_\n\n")
        return "\n_(context compacted)_\n\n"
    if status == "failed":
        why = report.get("error")
        return f"\n_(context compaction failed{': ' + str(why) if why else ''})_\n\n"
    return None


class UpdateSink:
    """Sends one session's updates to the client, in order."""

    def __init__(self, conn: Client, transport: LineTransport, session_id: str, caps: ClientCaps) -> None:
        self._conn = conn
        self._transport = transport
        self.session_id = session_id
        self._caps = caps

    async def send(self, update: dict[str, Any]) -> None:
        if update.get("sessionUpdate") == "compaction_update":
            if self._caps.compaction:
                await self._transport.notify("session/update", {"sessionId": self.session_id, "update": update})
                return
            text = compaction_text(update)
            if text is None:
                return
            update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        try:
            note = SessionNotification.model_validate({"sessionId": self.session_id, "update": update})
        except ValidationError as exc:
            log.warning("dropping an update that is not valid ACP (%s): %s", update.get("sessionUpdate"), exc)
            return
        await self._conn.session_update(session_id=self.session_id, update=note.update)

    async def text(self, text: str) -> None:
        await self.send({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})
