"""A stored transcript as the update stream a client would have seen (for session load)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from agent import events
from agent.paths import OutsideWorkspace, resolve_in_workspace
from agent.tools.base import Tool
from agent.tools.registry import BUILTIN_TOOLS
from agent.types import Message, SessionUpdate, text_of

_TOOLS = {t.name: t for t in BUILTIN_TOOLS}


def _describe(name: str, args: object, root: Path | None) -> tuple[str, str, list[dict[str, object]]]:
    """The same title, kind and locations the live tool call had."""
    tool: Tool | None = _TOOLS.get(name)
    if tool is None or not isinstance(args, dict):
        return name, "other", []
    locations = []
    if root is not None:
        for raw in tool.paths(args):
            try:
                locations.append(events.location(str(resolve_in_workspace(root, raw))))
            except OutsideWorkspace:
                continue
    return tool.title(args) or name, tool.kind, locations


def replay_updates(messages: Iterable[Message], root: Path | None = None) -> Iterator[SessionUpdate]:
    """``user_message_chunk``, ``agent_thought_chunk``, ``agent_message_chunk``, ``tool_call`` and its final
    ``tool_call_update`` for every message after the system prompt, in order."""
    for msg in messages:
        role = msg.get("role")
        if role == "user":
            text = text_of(msg)
            if (msg.get("meta") or {}).get("summary"):
                continue
            if text:
                yield events.user_chunk(text)
        elif role == "assistant":
            if msg.get("reasoning"):
                yield events.thought_chunk(str(msg["reasoning"]))
            text = text_of(msg)
            if text:
                yield events.message_chunk(text)
            for call in msg.get("tool_calls") or []:
                name = call["function"]["name"]
                try:
                    args = json.loads(call["function"]["arguments"] or "{}")
                except ValueError:
                    args = {"arguments": call["function"]["arguments"]}
                title, kind, locations = _describe(name, args, root)
                yield events.tool_call(call["id"], title, kind, status="in_progress", locations=locations,
                                       raw_input=args)
        elif role == "tool":
            failed = bool((msg.get("meta") or {}).get("error"))
            text = text_of(msg)
            yield events.tool_call_update(str(msg.get("tool_call_id", "")),
                                          status="failed" if failed else "completed",
                                          content=[events.text_content(text[:4000])])
