"""Undo: each file's content from before a turn's first edit to it, kept in the store (else in memory)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from .conversation import Conversation
from .host import Host
from .paths import display
from .sessions.tree import FileRewind


class Checkpoints:
    def __init__(self, conversation: Conversation) -> None:
        self._conversation = conversation
        self._memory: dict[tuple[int, str], tuple[bool, str | None]] = {}  # (turn, path) -> (existed, content)
        self._after: dict[tuple[int, str], str | None] = {}  # (turn, path) -> what the turn left (in memory)
        self._writes: set[asyncio.Task[None]] = set()  # after-states on their way to the store

    async def save(self, path: Path, previous: str | None) -> None:
        """Keep ``previous`` (None: the file did not exist) unless this turn already has a checkpoint for it."""
        conversation = self._conversation
        if conversation.store is not None:
            await conversation.store.save_checkpoint(conversation.session_id, conversation.turn_index, str(path),
                                                     previous is not None, previous)
        else:
            self._memory.setdefault((conversation.turn_index, str(path)), (previous is not None, previous))

    def note_after(self, path: Path, content: str | None) -> None:
        """The running turn's edit left ``path`` holding ``content`` (None: deleted); stored in the background
        (``settle`` waits for it), since edits report it from synchronous code."""
        conversation = self._conversation
        key = (conversation.turn_index, str(path))
        if conversation.store is None:
            self._after[key] = content
            return
        task = asyncio.ensure_future(conversation.store.record_after(conversation.session_id, *key, content))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def settle(self) -> None:
        if self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)

    async def files_since(self, turn: int, *, drop: bool = False) -> list[FileRewind]:
        """Every file changed in ``turn`` or later: its state before the earliest, after the latest such turn."""
        conversation = self._conversation
        if conversation.store is not None:
            return await conversation.store.rewind_files(conversation.session_id, turn, drop=drop)
        out: dict[str, FileRewind] = {}
        for key in sorted(k for k in self._memory if k[0] >= turn):
            existed, content = self._memory[key]
            base = out.get(key[1]) or FileRewind(key[1], existed, content, False, False, None)
            after = self._after.get(key, content if existed else None)
            out[key[1]] = FileRewind(base.path, base.existed, base.content, key in self._after, after is not None,
                                     after)
        if drop:
            for key in [k for k in self._memory if k[0] >= turn]:
                self._memory.pop(key)
                self._after.pop(key, None)
        return sorted(out.values(), key=lambda f: f.path)

    async def pop(self, turns: int) -> list[tuple[str, bool, str | None]]:
        """The earliest checkpoint of each file edited in the last ``turns`` turns, removed: (path, existed, content)."""
        conversation = self._conversation
        if conversation.store is not None:
            return [(c.path, c.existed, c.content)
                    for c in await conversation.store.pop_checkpoints(conversation.session_id, turns)]
        chosen = sorted({t for t, _ in self._memory}, reverse=True)[:turns]
        earliest: dict[str, tuple[bool, str | None]] = {}
        for key in sorted(self._memory):
            if key[0] in chosen:
                earliest.setdefault(key[1], self._memory.pop(key))
        return [(p, e, c) for p, (e, c) in earliest.items()]

    async def restore(self, turns: int, host: Host) -> list[str]:
        """Put back the files edited in the last ``turns`` turns; returns the restored paths as shown to the user.
        The model hears about it with the next user message."""
        if turns < 1:
            raise ValueError("turns must be at least 1")
        root = self._conversation.root
        restored = []
        for path_text, existed, content in await self.pop(turns):
            path = Path(path_text)
            try:
                current: str | None = await host.read_text(path)
            except (FileNotFoundError, OSError):
                current = None
            outcome = await (host.write_text(path, content or "", previous=current) if existed
                             else host.delete_file(path))
            if outcome.applied:
                restored.append(display(root, path))
        if restored:
            self._conversation.add_note(f"[The user undid the file changes of the last {turns} turn(s); these files "
                                        f"are back as they were: {', '.join(restored)}]")
        return restored
