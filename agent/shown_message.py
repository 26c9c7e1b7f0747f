"""What the editor was shown of one logical model call, kept whole across its retries and fallbacks.

Every streamed chunk of a call carries one ``messageId``. When an attempt fails after streaming part of its
answer and the call is made again (a retry, a compression, a fallback model), the new attempt is compared
with what the editor already shows, thought and text in order:

- while it repeats what was shown, nothing is sent; once it goes past it, only the new part is sent, under
  the same ``messageId`` (the editor ends with exactly the stored message, on any client);
- when it differs (or ends short of what was shown), the shown part is void: the attempt's answer so far
  is sent again as a new message (a new ``messageId``) whose first chunk carries
  ``_meta.agentls.replaces = <the void messageId>``, and it streams on from there.

docs/loop.md §4.2, docs/acp.md "Updates", docs/protocol.md "agent/update".
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from . import events
from .providers.base import StreamSink
from .types import SessionUpdate

Send = Callable[[SessionUpdate], Awaitable[None]]
Segment = tuple[str, str]  # ("text" | "reasoning", text): consecutive pieces of one kind, joined


def _append(segments: list[list[Any]], kind: str, piece: str) -> None:
    """Add ``piece`` to the last segment when it has the same kind, else open one (pieces kept as a list)."""
    if segments and segments[-1][0] == kind:
        segments[-1][1].append(piece)
    else:
        segments.append([kind, [piece]])


def _joined(segments: list[list[Any]]) -> list[Segment]:
    return [(kind, "".join(pieces)) for kind, pieces in segments]


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


class ShownMessage:
    """One logical call's answer as the editor sees it; ``sink`` is what the provider streams into."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.message_id = new_message_id()
        self._shown: list[list[Any]] = []  # what the editor has under ``message_id``
        self._attempt: list[list[Any]] = []  # what the current attempt produced
        self._frozen: list[Segment] = []  # ``_shown`` joined, while an attempt is compared with it
        self._matching = False
        self._at = (0, 0)  # the compared attempt's position in ``_frozen``: (segment, offset)
        self._replaces: str | None = None
        self.sink = StreamSink(on_text=self._on_text, on_reasoning=self._on_reasoning)

    async def _on_text(self, delta: str) -> None:
        await self.feed("text", delta)

    async def _on_reasoning(self, delta: str) -> None:
        await self.feed("reasoning", delta)

    def restart(self) -> None:
        """A new attempt of the same call begins: it is compared with what was shown."""
        self._attempt = []
        self._matching = bool(self._shown)
        self._frozen = _joined(self._shown)
        self._at = (0, 0)

    async def feed(self, kind: str, piece: str) -> None:
        if not piece:
            return
        _append(self._attempt, kind, piece)
        if not self._matching:
            await self._show(kind, piece)
            return
        rest = self._match(kind, piece)
        if rest is None:
            await self._void()
        elif rest:
            self._matching = False
            await self._show(kind, rest)

    def _match(self, kind: str, piece: str) -> str | None:
        """Advance the compared attempt by ``piece``: the part beyond what was shown ("" while it repeats
        the shown part), or None when it differs from it."""
        seg, off = self._at
        while piece:
            if seg == len(self._frozen):
                return piece
            seg_kind, seg_text = self._frozen[seg]
            if off == len(seg_text):
                if kind == seg_kind and seg == len(self._frozen) - 1:
                    return piece
                seg, off = seg + 1, 0
                continue
            if kind != seg_kind:
                return None
            n = min(len(piece), len(seg_text) - off)
            if seg_text[off:off + n] != piece[:n]:
                return None
            off += n
            piece = piece[n:]
        self._at = (seg, off)
        return ""

    async def finish(self) -> None:
        """The attempt succeeded: if it ended short of what was shown, the shown part is void."""
        if not self._matching:
            return
        seg, off = self._at
        last = len(self._frozen) - 1
        if not (seg > last or (seg == last and off == len(self._frozen[last][1]))):
            await self._void()
        self._matching = False

    async def _void(self) -> None:
        """Start a new message that replaces the shown one, with everything this attempt produced so far."""
        self._matching = False
        self._replaces = self.message_id
        self.message_id = new_message_id()
        self._shown = []
        for kind, text in _joined(self._attempt):
            await self._show(kind, text)
        if self._replaces is not None:  # nothing to show: the marker goes alone, on an empty chunk
            await self._send(events.message_chunk("", message_id=self.message_id,
                                                  meta={"agentls": {"replaces": self._replaces}}))
            self._replaces = None

    async def _show(self, kind: str, piece: str) -> None:
        _append(self._shown, kind, piece)
        meta = None
        if self._replaces is not None:
            meta = {"agentls": {"replaces": self._replaces}}
            self._replaces = None
        build = events.thought_chunk if kind == "reasoning" else events.message_chunk
        await self._send(build(piece, message_id=self.message_id, meta=meta))
