"""Undo: each file's content from before a turn's first edit to it, kept in the store (else in memory)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from .conversation import Conversation
from .host import Host
from .paths import display
from .sessions.tree import FileRewind, fold


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
        """Every file changed in ``turn`` or later: its state before the earliest, after the latest such turn, and
        whether it changed between them (``tree.fold``)."""
        conversation = self._conversation
        if conversation.store is not None:
            return await conversation.store.rewind_files(conversation.session_id, turn, drop=drop)
        keys = sorted(k for k in self._memory if k[0] >= turn)
        files = fold((k[1], *self._memory[k], None if k not in self._after else self._after[k] is not None,
                      self._after.get(k)) for k in keys)
        if drop:
            for key in keys:
                self._memory.pop(key)
                self._after.pop(key, None)
        return files

    async def turns(self) -> list[int]:
        """The turns that have checkpoints, newest first."""
        conversation = self._conversation
        if conversation.store is not None:
            return await conversation.store.checkpoint_turns(conversation.session_id)
        return sorted({t for t, _ in self._memory}, reverse=True)

    async def restore(self, turns: int, host: Host, *, force: bool = False) -> list[str]:
        """Put back the files edited in the last ``turns`` turns that edited files; returns the restored paths as
        shown to the user. Refuses (``RewindRefused``, nothing changed) as a rewind does: a file changed since or
        between those turns is only overwritten with ``force``. The model hears about it with the next user
        message."""
        from .rewind import check_files

        if turns < 1:
            raise ValueError("turns must be at least 1")
        chosen = (await self.turns())[:turns]
        if not chosen:
            return []
        root = self._conversation.root
        await self.settle()
        files = await self.files_since(min(chosen))
        now = await check_files(files, host, root, force=force, action="undo")
        await self.files_since(min(chosen), drop=True)
        restored = []
        for f in files:
            path, current = Path(f.path), now[f.path]
            outcome = await (host.write_text(path, f.content or "", previous=current) if f.existed
                             else host.delete_file(path))
            if outcome.applied:
                restored.append(display(root, path))
        if restored:
            self._conversation.add_note(f"[The user undid the file changes of the last {turns} turn(s); these files "
                                        f"are back as they were: {', '.join(restored)}]")
        return restored
