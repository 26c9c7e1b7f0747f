"""The session's transcript: its messages, its system prompt, and how much of them the store already has."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from .call_ids import CallIds
from .transcript import repair, settled, violations
from .types import Message

if TYPE_CHECKING:
    from .sessions.store import SessionStore

log = logging.getLogger("agentls.sessions")
PromptBuilder = Callable[[str | None, str | None], Awaitable[str]]  # (project instructions, system message)
UNSEEN = (-1, -1)  # a revision no store has: the next lease loads the transcript again


class Conversation:
    """Messages are appended by the turn and persisted per round (``persist``); a whole new transcript
    (a caller's history, a compression) is written over the stored one at the next ``persist``."""

    def __init__(self, session_id: str, root: Path, session_db: str | Path | SessionStore | None, *,
                 model: Callable[[], str], system_message: str | None = None,
                 origin: tuple[str, str] | None = None) -> None:
        self.session_id = session_id
        # A subagent's session: (the parent session's id, its delegate_task call's id), stored with the row.
        self.origin = origin
        self.root = root
        self.messages: list[Message] = []
        self.system_prompt: str | None = None
        self.store: SessionStore | None = None
        self.turn_index = 0  # turns run in this session, stored ones included
        self.titled = False  # the session has a title (stored, or given after its first turn)
        self._session_db = session_db
        self._model = model  # the model in use now, recorded with the session
        self._system_message = system_message
        self._owns_store = False
        self._session_row = False
        self._persisted = 0  # messages[:_persisted] are in the store
        self._needs_rewrite = False
        self.call_ids = CallIds()  # tool-call ids unique in the session; the provider's own kept for it
        self._notes: list[str] = []
        self._revision: tuple[int, int] = (0, 0)  # the store's revision of the session as last seen here
        # The running turn's user message: its index in ``messages``, kept right by every rewrite (a compression
        # says where it went, docs/loop.md §7). None between turns.
        self.turn_user: int | None = None

    async def open(self) -> None:
        """Open the store (when there is one) and load the session if it exists."""
        from .sessions.store import SessionStore

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
        if record is None:
            self._revision = await self.store.revision(self.session_id)
            return
        self._session_row = True
        self.system_prompt = record.system_prompt
        self.turn_index = record.turn_count
        self.titled = bool(record.title)
        await self._load(self.store)

    async def _load(self, store: SessionStore) -> None:
        """The stored transcript, made ready to be continued (``transcript.settled``). When that changes it (a crash
        cut a round, or came before any answer) and no other process is running a turn on the session, the change
        is saved at once, under the session's lease, so every later reader gets it. Otherwise it is made here in
        memory only (a prompt another process is answering is left open), and the transcript is loaded again (and
        the change saved) when this process next takes the lease."""
        loaded = await store.load_messages(self.session_id)
        fixed = settled(loaded)
        if fixed is not loaded:
            running = await store.lease_holder(self.session_id) is not None
            if running or not await self._save_settled(store):
                self.messages[:] = settled(loaded, stopped=False) if running else fixed
                self._persisted = len(self.messages)
                self._needs_rewrite = False
                self._revision = UNSEEN
                return
        else:
            self._take(loaded)
        self._revision = await store.revision(self.session_id)

    def _take(self, loaded: list[Message]) -> None:
        """``loaded`` (what the store holds) settled; the change, if any, is written at the next ``persist``:
        appended when the stored rows stay a prefix, else by rewriting them."""
        fixed = settled(loaded)
        self.messages[:] = fixed
        self.turn_user = None
        self._persisted = len(loaded)
        self._needs_rewrite = fixed[:len(loaded)] != loaded

    async def _save_settled(self, store: SessionStore) -> bool:
        """Load and settle the transcript under a short lease and save it; False when that cannot be done."""
        from .sessions import SessionBusy, StoreError

        if store.read_only:
            return False
        try:
            await store.acquire_lease(self.session_id)
        except (SessionBusy, StoreError) as exc:  # another process took it meanwhile; the store cannot be written
            log.info("the repair of session %s is not saved now: %s", self.session_id, exc)
            return False
        try:
            self._take(await store.load_messages(self.session_id))
            await self.persist()
            return True
        except StoreError as exc:
            log.warning("saving the repaired transcript of session %s failed: %s", self.session_id, exc)
            return False
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                try:
                    await store.release_lease(self.session_id)
                except StoreError as exc:
                    log.warning("releasing the lease of session %s failed: %s", self.session_id, exc)

    @asynccontextmanager
    async def lease(self) -> AsyncIterator[None]:
        """The session's lease for one turn (``SessionBusy`` when another process drives it). A transcript
        another process extended since this one last saw it is loaded again first."""
        store = self.store
        if store is None:
            yield
            return
        await store.acquire_lease(self.session_id)
        try:
            if self._session_row and await store.get_session(self.session_id) is None:
                from .sessions.schema import SessionDeleted

                raise SessionDeleted(self.session_id)  # never run on, or save into, a deleted session
            if await store.revision(self.session_id) != self._revision and self._persisted == len(
                    self.messages) and not self._needs_rewrite:
                self._take(await store.load_messages(self.session_id))  # a repair is saved with the turn's first save
                record = await store.get_session(self.session_id)
                if record is not None:
                    self.turn_index = max(self.turn_index, record.turn_count)
                log.info("session %s was continued elsewhere; its transcript was loaded again", self.session_id)
            yield
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                try:  # a store failing here leaves the turn's outcome standing; an unreleased lease lapses
                    self._revision = await store.revision(self.session_id)
                except Exception as exc:
                    log.warning("reading the revision of session %s failed: %s", self.session_id, exc)
                try:
                    await store.release_lease(self.session_id)
                except Exception as exc:
                    log.warning("releasing the lease of session %s failed: %s", self.session_id, exc)

    async def close(self) -> None:
        if self.store is not None and self._owns_store:
            await self.store.close()

    async def ensure_system_prompt(self, system_message: str | None, build: PromptBuilder) -> None:
        """Built once per session (``build(project instructions, system message)``: the profile's) and stored;
        byte-identical after resume. Later system messages are ignored."""
        system_message = system_message or self._system_message
        if self.system_prompt is not None:
            if system_message and system_message not in self.system_prompt:
                log.warning("system_message ignored: the session's system prompt is fixed once it is built")
            return
        from .context.files import load_root_context

        self.system_prompt = await build(await load_root_context(self.root), system_message)

    def transcript(self) -> list[Message]:
        """The whole transcript as the model sees it, system prompt first."""
        head: list[Message] = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return head + list(self.messages)

    def start_turn(self, content: Any) -> int:
        """Count a new turn and append its user message; returns that message's index."""
        from .shown_message import new_message_id

        self.turn_index += 1
        self.messages.append({"role": "user", "content": content, "meta": {"messageId": new_message_id()}})
        self.turn_user = len(self.messages) - 1
        return self.turn_user

    def end_turn(self) -> None:
        self.turn_user = None

    def turn_request(self) -> Message | None:
        """The running turn's user message as the user wrote it (without a summary merged into it)."""
        at = self.turn_user
        if at is None or not 0 <= at < len(self.messages):
            return None
        from .context.summary import split_summary

        return split_summary(self.messages[at])[2]

    def replace(self, messages: list[Message], *, turn_user: int | None = None) -> None:
        """A whole new transcript (a caller's history, a compression): the stored one is rewritten.
        ``turn_user``: where the running turn's user message is in it (a compression's ``pinned``)."""
        self.messages[:] = messages
        self.turn_user = turn_user
        self._needs_rewrite = True

    def repair_tail(self) -> None:
        """Make the transcript valid again after a turn ended mid-round. Only the unpersisted tail can be
        broken (rounds are persisted whole); the stored rows are rewritten only if the prefix changed."""
        if not violations(self.messages):
            return
        from .context import anchor

        marked, at = anchor.mark(self.messages, self.turn_user)
        fixed, self.turn_user = anchor.take(repair(marked))
        if at is not None and self.turn_user is None:
            self.turn_user = anchor.last_user(fixed)
        done = self._persisted
        if fixed[:done] != self.messages[:done]:
            self._needs_rewrite = True
        self.messages[:] = fixed

    async def persist(self, *, final: bool = False) -> None:
        """Write what is new. Called before every model call and after every tool round."""
        store = self.store
        if store is None:
            self._persisted = len(self.messages)
            self._needs_rewrite = False
            return
        if not self._session_row:
            parent_id, call_id = self.origin or (None, None)
            await store.create_session(session_id=self.session_id, cwd=str(self.root), model=self._model(),
                                       system_prompt=self.system_prompt or "", parent_id=parent_id,
                                       parent_tool_call_id=call_id)
            self._session_row = True
        if self._needs_rewrite:
            await store.replace_messages(self.session_id, self.messages)
            self._needs_rewrite = False
        elif self._persisted < len(self.messages):
            try:
                await store.append_messages(self.session_id, self.messages[self._persisted:], turn=self.turn_index)
            except Exception:
                raise  # the one INSERT failed, so it wrote nothing: the next save appends the same rows
            except BaseException:
                # Cancelled mid-commit: the round may or may not be in. Rewrite next time, never append twice.
                self._needs_rewrite = True
                raise
        self._persisted = len(self.messages)
        if final:
            await store.update_session(self.session_id, turn_count=self.turn_index, model=self._model())

    async def set_title(self, title: str) -> None:
        self.titled = True
        if self.store is not None:
            await self.store.update_session(self.session_id, title=title)

    def add_note(self, text: str) -> None:
        """Something the model should hear with the next user message (e.g. that the user undid edits)."""
        self._notes.append(text)

    def take_notes(self) -> str | None:
        if not self._notes:
            return None
        text = "\n".join(self._notes)
        self._notes.clear()
        return text
