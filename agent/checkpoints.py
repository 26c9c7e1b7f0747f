"""Undo: each file's content from before a turn's first edit to it, kept in the store (else in memory)."""

from __future__ import annotations

from pathlib import Path

from .conversation import Conversation
from .host import Host
from .paths import display


class Checkpoints:
    def __init__(self, conversation: Conversation) -> None:
        self._conversation = conversation
        self._memory: dict[tuple[int, str], tuple[bool, str | None]] = {}  # (turn, path) -> (existed, content)

    async def save(self, path: Path, previous: str | None) -> None:
        """Keep ``previous`` (None: the file did not exist) unless this turn already has a checkpoint for it."""
        conversation = self._conversation
        if conversation.store is not None:
            await conversation.store.save_checkpoint(conversation.session_id, conversation.turn_index, str(path),
                                                     previous is not None, previous)
        else:
            self._memory.setdefault((conversation.turn_index, str(path)), (previous is not None, previous))

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
