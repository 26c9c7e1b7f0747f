"""A stored transcript as the update stream a client would have seen (for session load)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from . import events
from .data_files import BadData, json_value
from .editor_context import strip as strip_editor_context
from .paths import OutsideWorkspace, resolve_in_workspace
from .tools.base import Tool
from .tools.registry import BUILTIN_TOOLS
from .types import Message, SessionUpdate, text_of

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


def _image_block(part: object) -> dict[str, object] | None:
    """An ACP image block for an internal ``image_url`` part holding a data URL."""
    if not isinstance(part, dict) or part.get("type") != "image_url":
        return None
    url = str((part.get("image_url") or {}).get("url", ""))
    if not url.startswith("data:") or ";base64," not in url:
        return {"type": "image", "data": "", "mimeType": "image/png", "uri": url} if url else None
    mime, data = url[5:].split(";base64,", 1)
    return {"type": "image", "data": data, "mimeType": mime or "image/png"}


def _message_id(msg: Message) -> str | None:
    """The stored id of a message (what a fork names), as the live chunks carried it."""
    value = (msg.get("meta") or {}).get("messageId")
    return value if isinstance(value, str) else None


def replay_updates(messages: Iterable[Message], root: Path | None = None) -> Iterator[SessionUpdate]:
    """``user_message_chunk``, ``agent_thought_chunk``, ``agent_message_chunk``, ``tool_call`` and its final
    ``tool_call_update`` for every message after the system prompt, in order."""
    for msg in messages:
        role = msg.get("role")
        if role == "user":
            if (msg.get("meta") or {}).get("summary"):
                continue
            text = strip_editor_context(text_of(msg))  # the prompt as the user typed it
            if text:
                yield events.user_chunk(text, message_id=_message_id(msg))
            content = msg.get("content")
            for part in content if isinstance(content, list) else ():
                image = _image_block(part)
                if image is not None:
                    yield {"sessionUpdate": "user_message_chunk", "content": image}
        elif role == "assistant":
            if (msg.get("meta") or {}).get("placeholder"):
                continue
            if msg.get("reasoning"):
                yield events.thought_chunk(str(msg["reasoning"]), message_id=_message_id(msg))
            text = text_of(msg)
            if text:
                yield events.message_chunk(text, message_id=_message_id(msg))
            for call in msg.get("tool_calls") or []:
                name = call["function"]["name"]
                try:
                    args = json_value(call["function"]["arguments"] or "{}")
                except BadData:
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
