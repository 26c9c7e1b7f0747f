"""A stored transcript as the update stream a client would have seen (for session load)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from agent import events
from agent.types import Message, SessionUpdate, text_of

_KINDS = {"read_file": "read", "write_file": "edit", "edit_file": "edit", "list_dir": "read",
          "search_files": "search", "terminal": "execute", "todo": "think"}


def replay_updates(messages: Iterable[Message]) -> Iterator[SessionUpdate]:
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
                title = name if not isinstance(args, dict) else \
                    f"{name} {args.get('path') or args.get('command') or args.get('pattern') or ''}".strip()
                yield events.tool_call(call["id"], title, _KINDS.get(name, "other"), status="in_progress",
                                       raw_input=args)
        elif role == "tool":
            failed = bool((msg.get("meta") or {}).get("error"))
            text = text_of(msg)
            yield events.tool_call_update(str(msg.get("tool_call_id", "")),
                                          status="failed" if failed else "completed",
                                          content=[events.text_content(text[:4000])])
