"""Builders for the one update vocabulary both faces forward: ACP ``SessionUpdate`` objects."""

from __future__ import annotations

from typing import Any

from .types import SessionUpdate, Usage


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _chunk(kind: str, text: str, message_id: str | None, meta: dict[str, Any] | None) -> SessionUpdate:
    update: SessionUpdate = {"sessionUpdate": kind, "content": _text(text)}
    if message_id is not None:
        update["messageId"] = message_id
    if meta:
        update["_meta"] = meta
    return update


def message_chunk(text: str, *, message_id: str | None = None, meta: dict[str, Any] | None = None) -> SessionUpdate:
    return _chunk("agent_message_chunk", text, message_id, meta)


def thought_chunk(text: str, *, message_id: str | None = None, meta: dict[str, Any] | None = None) -> SessionUpdate:
    return _chunk("agent_thought_chunk", text, message_id, meta)


def user_chunk(text: str, *, message_id: str | None = None) -> SessionUpdate:
    update: SessionUpdate = {"sessionUpdate": "user_message_chunk", "content": _text(text)}
    if message_id is not None:
        update["messageId"] = message_id
    return update


def tool_call(
    tool_call_id: str,
    title: str,
    kind: str,
    *,
    status: str = "pending",
    locations: list[dict[str, Any]] | None = None,
    raw_input: Any = None,
) -> SessionUpdate:
    update: SessionUpdate = {
        "sessionUpdate": "tool_call",
        "toolCallId": tool_call_id,
        "title": title,
        "kind": kind,
        "status": status,
    }
    if locations:
        update["locations"] = locations
    if raw_input is not None:
        update["rawInput"] = raw_input
    return update


def tool_call_update(
    tool_call_id: str,
    *,
    status: str | None = None,
    content: list[dict[str, Any]] | None = None,
    title: str | None = None,
    locations: list[dict[str, Any]] | None = None,
    raw_output: Any = None,
) -> SessionUpdate:
    update: SessionUpdate = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id}
    given = {"status": status, "content": content, "title": title, "locations": locations, "rawOutput": raw_output}
    update.update((key, value) for key, value in given.items() if value is not None)
    return update


def text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": _text(text)}


def diff_content(path: str, old_text: str | None, new_text: str) -> dict[str, Any]:
    return {"type": "diff", "path": path, "oldText": old_text, "newText": new_text}


def terminal_content(terminal_id: str) -> dict[str, Any]:
    return {"type": "terminal", "terminalId": terminal_id}


def location(path: str, line: int | None = None) -> dict[str, Any]:
    return {"path": path} if line is None else {"path": path, "line": line}


def plan(entries: list[dict[str, Any]]) -> SessionUpdate:
    return {"sessionUpdate": "plan", "entries": entries}


def usage_update(used: int, size: int, cost: float | None = None, turn: Usage | None = None) -> SessionUpdate:
    """``used``/``size``: the context meter; ``cost``: the session's so far. ``turn``: the turn's tokens so far,
    its subagents' included (``_meta.agentls.turnUsage``)."""
    update: SessionUpdate = {"sessionUpdate": "usage_update", "used": max(0, used), "size": max(0, size)}
    if cost is not None:
        update["cost"] = {"amount": round(cost, 6), "currency": "USD"}
    if turn is not None:
        update["_meta"] = {"agentls": {"turnUsage": {
            "promptTokens": turn["prompt_tokens"], "completionTokens": turn["completion_tokens"],
            "cachedTokens": turn["cached_tokens"]}}}
    return update


def compaction_update(compaction_id: str, status: str, summary: str | None = None,
                      meta: dict[str, Any] | None = None) -> SessionUpdate:
    """ACP session-compaction RFD: status is in_progress, completed, failed or cancelled."""
    update: SessionUpdate = {"sessionUpdate": "compaction_update", "compactionId": compaction_id, "status": status}
    if summary:
        update["summary"] = [_text(summary)]
    if meta:
        update["_meta"] = {"agentls": meta}
    return update


def session_info(title: str | None = None, updated_at: str | None = None,
                 meta: dict[str, Any] | None = None) -> SessionUpdate:
    update: SessionUpdate = {"sessionUpdate": "session_info_update"}
    if title is not None:
        update["title"] = title
    if updated_at is not None:
        update["updatedAt"] = updated_at
    if meta:
        update["_meta"] = {"agentls": meta}
    return update


def turn_state(state: str, **details: Any) -> SessionUpdate:
    """``running`` when a turn starts, ``idle`` when it ends (with ``exitReason``), so a client also sees
    the turns it did not start itself (steers, code actions). Carried in ``session_info_update._meta``."""
    return session_info(meta={"turn": {"state": state, **{k: v for k, v in details.items() if v is not None}}})


def sandbox_update(message: str, status: dict[str, Any]) -> SessionUpdate:
    """Said once per session when commands run unconfined because no sandbox works here: an ACP
    ``session_info_update`` whose ``_meta.agentls.sandbox`` carries the message and the status."""
    return {"sessionUpdate": "session_info_update",
            "_meta": {"agentls": {"sandbox": {**status, "message": message}}}}


def sandbox_notice(update: SessionUpdate) -> str | None:
    """The message of a ``sandbox_update``, else None."""
    meta = update.get("_meta")
    sandbox = meta.get("agentls", {}).get("sandbox") if isinstance(meta, dict) else None
    message = sandbox.get("message") if isinstance(sandbox, dict) else None
    return message if isinstance(message, str) else None
