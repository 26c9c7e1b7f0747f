"""Tool-call ids unique within a session, with the provider's own ids kept for the provider.

Editors key their tool-call cards by id, and the transcript pairs each result with its call by id. Some
OpenAI-compatible servers hand out the same ids every response (``call_0_0``), so a session would hold
two calls with one id: the editor would overwrite the first card with the second. ``CallIds.assign``
renames a call whose id the session has already used (``call_0_0`` → ``call_0_0-2``) and remembers the
provider's id on the assistant message (``meta.provider_ids``: ``{session id: provider id}``);
everything inside agentls (updates, permission prompts, terminals, replay, the store) uses the session
id. ``CallIds.for_provider`` gives the provider its own ids back, in the assistant message and in the
tool results that answer it, so a server with rules about its ids (Mistral's nine characters) or
bookkeeping keyed by them (signatures, reasoning items) sees exactly what it sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from .types import Message, ToolCall

META_KEY = "provider_ids"


def _calls(message: Message) -> list[ToolCall]:
    calls = message.get("tool_calls")
    return calls if isinstance(calls, list) else []


def _renames(message: Message) -> dict[str, str] | None:
    meta = message.get("meta")
    found = meta.get(META_KEY) if isinstance(meta, dict) else None
    return found if isinstance(found, dict) and found else None


class CallIds:
    """The ids a session has used, and the provider's view of a renamed transcript."""

    def __init__(self) -> None:
        self._used: set[str] = set()  # only grows: ids compacted away are still on the editor's screen
        self._scanned: tuple[int, int] = (0, 0)  # (id of the list, messages seen of it)
        self._renamed = False  # any message of the session carries provider ids
        self._views: dict[int, tuple[Message, Message]] = {}

    def _sync(self, history: Sequence[Message]) -> None:
        """Learn the ids of messages not seen yet (all of them when the list was replaced or shortened)."""
        list_id, seen = self._scanned
        start = seen if list_id == id(history) and seen <= len(history) else 0
        for message in history[start:]:
            if message.get("role") != "assistant":
                continue
            for call in _calls(message):
                if isinstance(call, dict) and isinstance(call.get("id"), str):
                    self._used.add(call["id"])
            if _renames(message):
                self._renamed = True
        self._scanned = (id(history), len(history))

    def assign(self, message: Message, history: Sequence[Message]) -> Message:
        """``message`` (a new assistant message) with every call id unused in ``history`` and in this very
        message; the same object when nothing needed renaming."""
        calls = _calls(message)
        if not calls:
            return message
        self._sync(history)
        renames: dict[str, str] = {}
        fixed: list[ToolCall] = []
        given: set[str] = set()
        for call in calls:
            original = call.get("id") if isinstance(call.get("id"), str) else ""
            new = original
            if not new or new in self._used:
                base = original or "call"
                n = 2
                while f"{base}-{n}" in self._used:
                    n += 1
                new = f"{base}-{n}"
                # The provider gets its id back, unless it gave it twice in this response (its results could
                # not be told apart) or gave none: then the new id is the call's id for everyone.
                if original and original not in given:
                    renames[new] = original
            given.add(original)
            self._used.add(new)
            fixed.append(cast(ToolCall, {**call, "id": new}) if new != original else call)
        if all(a is b for a, b in zip(fixed, calls, strict=True)):
            return message
        if not renames:
            return cast(Message, {**message, "tool_calls": fixed})
        self._renamed = True
        meta: dict[str, Any] = dict(message.get("meta") or {})
        meta[META_KEY] = {**(meta.get(META_KEY) or {}), **renames}
        return cast(Message, {**message, "tool_calls": fixed, "meta": meta})

    def for_provider(self, messages: list[Message], history: Sequence[Message] | None = None) -> list[Message]:
        """``messages`` (a view of ``history``, the stored transcript) with each renamed call's provider id
        back in place (in its call and in its result). The same list when the session never renamed an id;
        copies are made once per message and reused, so the encoders' per-message caches keep working."""
        if not self._renamed:
            # A resumed session may carry renames from an earlier process; only new messages are looked at.
            self._sync(messages if history is None else history)
            if not self._renamed:
                return messages
        out: list[Message] = []
        current: dict[str, str] | None = None
        changed = False
        for message in messages:
            role = message.get("role")
            view = message
            if role == "assistant":
                current = _renames(message)
                if current:
                    view = self._view(message, current)
            elif role == "tool" and current:
                tid = message.get("tool_call_id")
                if isinstance(tid, str) and tid in current:
                    view = self._view(message, current)
            elif role != "tool":
                current = None
            changed = changed or view is not message
            out.append(view)
        if len(self._views) > 2 * len(messages) + 16:
            live = {id(m) for m in messages}
            for stale in [k for k in self._views if k not in live]:
                del self._views[stale]
        return out if changed else messages

    def _view(self, message: Message, renames: dict[str, str]) -> Message:
        hit = self._views.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        if message.get("role") == "assistant":
            calls = [cast(ToolCall, {**c, "id": renames[c["id"]]}) if c.get("id") in renames else c
                     for c in _calls(message)]
            view = cast(Message, {**message, "tool_calls": calls})
        else:
            view = cast(Message, {**message, "tool_call_id": renames[str(message.get("tool_call_id"))]})
        self._views[id(message)] = (message, view)
        return view
