"""Session persistence, titles, trajectories and undo for ``AIAgent`` (a mixin kept apart for size)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from agentls.agent import events
from agentls.agent.compress_ops import CompressOps
from agentls.agent.loop.state import TurnState
from agentls.agent.paths import display
from agentls.agent.tool_ops import ToolOps
from agentls.agent.transcript import repair, violations
from agentls.agent.types import Message, text_of

if TYPE_CHECKING:
    from agentls.agent.host import Host
    from agentls.agent.sessions.store import SessionStore
    from agentls.agent.tools.registry import ToolRegistry

log = logging.getLogger("agentls.sessions")

TITLE_PROMPT = ("Write a title of at most six words for a coding session that starts with the request below. "
                "Answer with the title only, no quotes.\n\nRequest:\n")


class SessionOps(CompressOps, ToolOps):
    session_id: str
    root: Path
    host: Host
    model: str
    titles: str
    trajectory_path: Path | None
    messages: list[Message]
    system_prompt: str | None
    store: SessionStore | None
    registry: ToolRegistry
    _session_db: Any
    _system_message: str | None

    def _init_session_state(self) -> None:
        self._persisted = 0
        self._needs_rewrite = False
        self._turn_index = 0
        self._session_row = False
        self._owns_store = False
        self._title_done = False
        self._notes: list[str] = []
        self._memory_checkpoints: dict[tuple[int, str], tuple[bool, str | None]] = {}
        self._store_revision: tuple[int, int] = (0, 0)

    async def _open_store(self) -> None:
        from agentls.agent.sessions.store import SessionStore

        db = self._session_db
        if db is None:
            return
        if isinstance(db, SessionStore):
            self.store = db
        else:
            self.store = SessionStore(db)
            self._owns_store = True
        await self.store.open()
        record = await self.store.get_session(self.session_id)
        if record is not None:
            self._session_row = True
            self.system_prompt = record.system_prompt
            loaded = await self.store.load_messages(self.session_id)
            self.messages = repair(loaded) if violations(loaded) else loaded
            self._persisted = len(self.messages)
            self._turn_index = record.turn_count
            self._title_done = bool(record.title)
        self._store_revision = await self.store.revision(self.session_id)

    @asynccontextmanager
    async def _turn_lease(self) -> AsyncIterator[None]:
        """The session's lease for one turn (``SessionBusy`` when another process drives it). A transcript
        another process extended since this one last saw it is loaded again first."""
        store = self.store
        if store is None:
            yield
            return
        await store.acquire_lease(self.session_id)
        try:
            if await store.revision(self.session_id) != self._store_revision and self._persisted == len(
                    self.messages) and not self._needs_rewrite:
                loaded = await store.load_messages(self.session_id)
                self.messages = repair(loaded) if violations(loaded) else loaded
                self._persisted = len(self.messages)
                record = await store.get_session(self.session_id)
                if record is not None:
                    self._turn_index = max(self._turn_index, record.turn_count)
                log.info("session %s was continued elsewhere; its transcript was loaded again", self.session_id)
            yield
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                try:
                    self._store_revision = await store.revision(self.session_id)
                finally:
                    await store.release_lease(self.session_id)

    async def _close_store(self) -> None:
        if self.store is not None and self._owns_store:
            await self.store.close()

    async def _ensure_system_prompt(self, system_message: str | None) -> None:
        """Built once per session and stored; byte-identical after resume. Later system messages are ignored."""
        system_message = system_message or self._system_message
        if self.system_prompt is not None:
            if system_message and system_message not in self.system_prompt:
                log.warning("system_message ignored: the session's system prompt is fixed once it is built")
            return
        from agentls.agent.context.files import load_root_context
        from agentls.agent.context.prompt import build_system_prompt

        context = await load_root_context(self.root)
        self.system_prompt = build_system_prompt(root=self.root, root_context=context, extra=system_message,
                                                 tool_names=self.registry.names)

    async def _persist(self, turn: TurnState | None = None, *, final: bool = False) -> None:
        """Write what is new. Called before every provider call and after every tool round."""
        store = self.store
        if store is None:
            self._persisted = len(self.messages)
            self._needs_rewrite = False
            return
        if not self._session_row:
            await store.create_session(session_id=self.session_id, cwd=str(self.root), model=self.model,
                                       system_prompt=self.system_prompt or "")
            self._session_row = True
        if self._needs_rewrite:
            await store.replace_messages(self.session_id, self.messages)
            self._needs_rewrite = False
        elif self._persisted < len(self.messages):
            try:
                await store.append_messages(self.session_id, self.messages[self._persisted:], turn=self._turn_index)
            except BaseException:
                # Cancelled or failed mid-commit: the round may or may not be in. Rewrite next time, never append twice.
                self._needs_rewrite = True
                raise
        self._persisted = len(self.messages)
        if final:
            await store.update_session(self.session_id, turn_count=self._turn_index, model=self.model)

    async def _save_trajectory(self, turn: TurnState) -> None:
        if self.trajectory_path is None:
            return
        from agentls.agent.trajectory import TrajectoryWriter

        await TrajectoryWriter(self.trajectory_path).write(
            session_id=self.session_id, task_id=turn.task_id, model=self.model, messages=self.transcript(),
            usage=dict(turn.usage), exit_reason=turn.exit_reason)

    def transcript(self) -> list[Message]:
        raise NotImplementedError

    async def _quick_title(self, content: Any) -> str | None:
        """After the first turn: the prompt's first line, stored at once (the model may improve it later)."""
        if self._title_done:
            return None
        self._title_done = True
        first = text_of({"role": "user", "content": content}).strip().splitlines()
        title = (first[0] if first else "New session")[:80]
        if self.store is not None:
            await self.store.update_session(self.session_id, title=title)
        await self._emit(events.session_info(title=title))
        return title

    async def _make_title(self, content: Any) -> None:
        """A better title from the auxiliary model, in the background; failures keep the quick title."""
        title = None
        if self.titles == "model":
            try:
                answer = await self._aux_call(TITLE_PROMPT + text_of({"role": "user", "content": content})[:2000],
                                              purpose="title", max_tokens=32)
                cleaned = answer.strip().strip('"').splitlines()
                if cleaned and cleaned[0].strip():
                    title = cleaned[0].strip()[:80]
            except Exception as exc:
                log.info("title generation failed, using the first line of the prompt: %s", exc)
        if title is None:
            return
        if self.store is not None:
            await self.store.update_session(self.session_id, title=title)
        await self._emit(events.session_info(title=title))

    def _take_notes(self) -> str | None:
        if not self._notes:
            return None
        text = "\n".join(self._notes)
        self._notes.clear()
        return text

    async def _checkpoint(self, path: Path, previous: str | None) -> None:
        """Keep a file's content from before this turn's first edit to it, for undo."""
        if self.store is not None:
            await self.store.save_checkpoint(self.session_id, self._turn_index, str(path), previous is not None,
                                             previous)
        else:
            self._memory_checkpoints.setdefault((self._turn_index, str(path)), (previous is not None, previous))

    async def _pop_checkpoints(self, turns: int) -> list[tuple[str, bool, str | None]]:
        if self.store is not None:
            return [(c.path, c.existed, c.content) for c in await self.store.pop_checkpoints(self.session_id, turns)]
        chosen = sorted({t for t, _ in self._memory_checkpoints}, reverse=True)[:turns]
        earliest: dict[str, tuple[bool, str | None]] = {}
        for key in sorted(self._memory_checkpoints):
            if key[0] in chosen:
                earliest.setdefault(key[1], self._memory_checkpoints.pop(key))
        return [(p, e, c) for p, (e, c) in earliest.items()]

    async def undo(self, turns: int = 1) -> list[str]:
        """Restore the files edited in the last ``turns`` turns; returns the restored paths."""
        if turns < 1:
            raise ValueError("turns must be at least 1")
        async with self._lock:
            await self._setup()
            restored = []
            for path_text, existed, content in await self._pop_checkpoints(turns):
                path = Path(path_text)
                try:
                    current: str | None = await self.host.read_text(path)
                except (FileNotFoundError, OSError):
                    current = None
                outcome = await (self.host.write_text(path, content or "", previous=current) if existed
                                 else self.host.delete_file(path))
                if outcome.applied:
                    restored.append(display(self.root, path))
            if restored:
                self._notes.append(f"[The user undid the file changes of the last {turns} turn(s); these files are "
                                   f"back as they were: {', '.join(restored)}]")
            return restored
