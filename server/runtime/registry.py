"""The live sessions of a server process, one registry over one store, whatever the face.

- A session gets its ``AIAgent`` as soon as a model resolves. Without one it still exists (the
  *no-model state*: ``no_model`` says why and what to do) and each later call that needs the agent
  builds it again, so fixing the configuration takes effect without a restart.
- A stored session (from any earlier process) is opened with its history loaded.
- Sessions share the store; each agent keeps its own HTTP client (a shared pool serializes badly).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentls.agent.config import ConfigError, Settings
from agentls.agent.local import is_local_model
from agentls.agent.sessions.store import SessionStore, default_db_path
from . import mcp, tree
from .live import LiveSession
from .notices import Notice, session_notices

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.agent.sessions.lease import LeaseHolder
    from agentls.agent.host import Host

log = logging.getLogger("agentls.runtime")

CLOSE_TIMEOUT = 15.0


class Face(Protocol):
    """What a face provides for its sessions."""

    def settings_for(self, cwd: Path) -> Settings:
        """The settings for a session in ``cwd``; raises ``ConfigError`` when they are unusable."""
        ...

    def host_for(self, session: LiveSession) -> Host:
        ...

    def mcp_servers(self) -> Any:
        """The face's own MCP servers for every session (LSP ``initializationOptions.mcpServers``), or None."""
        ...


class UnknownSession(KeyError):
    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.session_id = session_id

    def __str__(self) -> str:
        return f"unknown session {self.session_id!r}"


class NoModel(Exception):
    """No model can be resolved; the message says the two ways forward."""


class BadConfig(Exception):
    """The configuration for the session's directory is invalid."""


def session_info(record: Any, children: Sequence[Any] = ()) -> dict[str, Any]:
    """A stored session as both faces list it; its subagents' sessions (docs/loop.md §9.9) under
    ``_meta.agentls.children``."""
    info: dict[str, Any] = {"sessionId": record.id, "title": record.title, "cwd": record.cwd,
                            "updatedAt": record.updated_at}
    if children:
        info["_meta"] = {"agentls": {"children": [
            {"sessionId": c.id, "title": c.title, "parentToolCallId": c.parent_tool_call_id,
             "updatedAt": c.updated_at} for c in children]}}
    return info


class SessionRegistry:
    def __init__(self, face: Face, *, db_path: Path | None = None) -> None:
        self._face = face
        self._db_path = db_path
        self._live: dict[str, LiveSession] = {}
        self._store: SessionStore | None = None
        self._open_lock = asyncio.Lock()
        self._store_notices: list[Notice] = []  # what opening the store had to do, for the next session shown

    async def store(self) -> SessionStore:
        """The store, opened once; concurrent first calls wait for the same open. A store that cannot be
        opened raises ``StoreError`` (naming the file) now and is tried again by the next call."""
        async with self._open_lock:
            if self._store is None:
                store = SessionStore(self._db_path or default_db_path())
                await store.open()
                self._store = store  # published only once it is open
                self._store_notices += [Notice(text, "warning") for text in store.notices]
        return self._store

    def _with_store_notices(self, session: LiveSession) -> None:
        """A damaged file moved aside or a read-only store: told with the next session a face shows."""
        session.notices[:0], self._store_notices = self._store_notices, []

    async def running_elsewhere(self, session_id: str) -> LeaseHolder | None:
        """The other process running a turn of this session right now, if any."""
        return await (await self.store()).lease_holder(session_id)

    def _settings(self, cwd: Path) -> Settings:
        try:
            return self._face.settings_for(cwd)
        except ConfigError as exc:
            raise BadConfig(f"the agentls configuration for {cwd} is invalid: {exc}") from None

    # ----- sessions --------------------------------------------------------------------------
    def find(self, session_id: str) -> LiveSession | None:
        return self._live.get(session_id)

    def live(self) -> list[LiveSession]:
        return list(self._live.values())

    async def create(self, cwd: Path, *, system_message: str | None = None,
                     mcp_servers: Iterable[dict[str, Any]] = (), mcp_source: str = "session/new",
                     extra_roots: Iterable[Path] = ()) -> LiveSession:
        """A new session; in the no-model state when no model resolves. ``BadConfig`` for bad settings.
        Its MCP servers start in the background with its agent (server/runtime/mcp.py)."""
        await self.store()
        session = LiveSession(uuid.uuid4().hex, cwd.resolve(), system_message, mcp_servers=list(mcp_servers),
                              mcp_source=mcp_source, extra_roots=tuple(extra_roots))
        settings = self._settings(session.cwd)
        session.mode = settings.approval
        try:
            self._attach(session, settings)
        except NoModel as exc:
            session.no_model = str(exc)
            log.warning("session %s has no model yet: %s", session.session_id, exc)
        self._with_store_notices(session)
        self._live[session.session_id] = session
        return session

    async def open(self, session_id: str, *, mcp_servers: Iterable[dict[str, Any]] = (),
                   extra_roots: Iterable[Path] | None = None) -> LiveSession:
        """The live session, or the stored one loaded. ``UnknownSession``, ``NoModel``, ``BadConfig``.
        ``extra_roots`` (when given) replaces the session's extra workspace roots."""
        live = self._live.get(session_id)
        if live is not None:
            if extra_roots is not None:
                live.extra_roots = tuple(extra_roots)
            agent = await self.agent(live)
            if extra_roots is not None:
                agent.set_extra_roots(live.extra_roots)
            return live
        record = await (await self.store()).get_session(session_id)
        if record is None:
            raise UnknownSession(session_id)
        session = LiveSession(session_id, Path(record.cwd), mcp_servers=list(mcp_servers), mcp_source="session/load",
                              extra_roots=tuple(extra_roots or ()) or tree.saved_roots(record))  # the client's win
        settings = self._settings(session.cwd)
        session.mode = tree.saved_mode(record) or settings.approval  # the mode it was left in
        agent = self._attach(session, settings)
        tree.restore(session, record)
        try:
            await agent.__aenter__()  # loads the history
        except BaseException:
            await mcp.stop(session)
            raise
        self._with_store_notices(session)
        self._live[session_id] = session
        return session

    async def agent(self, session: LiveSession) -> AIAgent:
        """The session's agent, built now if it waited for a model; ``NoModel`` if it still must."""
        if session.agent is not None:
            return session.agent
        try:
            agent = self._attach(session, self._settings(session.cwd))
        except NoModel as exc:
            session.no_model = str(exc)
            raise
        session.no_model = None
        return agent

    def _attach(self, session: LiveSession, settings: Settings) -> AIAgent:
        from agentls.agent.resolve import agent_from_settings

        assert self._store is not None, "the store opens first"
        host = self._face.host_for(session)
        try:
            agent = agent_from_settings(settings, workspace=session.cwd, host=host, session_id=session.session_id,
                                        session_db=self._store, system_message=session.system_message,
                                        control=session.control)
        except ConfigError as exc:
            raise NoModel(f"agentls cannot run a turn: {exc}") from None
        agent.set_mode(session.mode)
        if session.extra_roots:
            agent.set_extra_roots(session.extra_roots)
        same_endpoint = [m for m in settings.fallback_models if not is_local_model(m)]
        session.models = list(dict.fromkeys([agent.model, *same_endpoint, *session.models]))
        session.notices = session_notices(settings)
        session.agent = agent
        session.cwd = agent.root
        mcp.start(session, agent, settings, self._face.mcp_servers())
        return agent

    async def listing(self, *, cwd: str | None = None, query: str | None = None, cursor: str | None = None,
                   limit: int = 50) -> tuple[list[dict[str, Any]], str | None]:
        """Stored sessions, newest first, in the listing shape; ``BadCursor`` for a bad cursor."""
        store = await self.store()
        records, next_cursor = await store.list_sessions(cwd=cwd, query=query, limit=limit, cursor=cursor)
        return [session_info(r, await store.child_sessions(r.id)) for r in records], next_cursor

    # ----- closing ---------------------------------------------------------------------------
    async def close(self, session_id: str) -> bool:
        """Cancel whatever runs in the session, wait for it, then close its agent. Idempotent."""
        session = self._live.pop(session_id, None)
        if session is None:
            return False
        await self._close([session])
        return True

    async def _close(self, sessions: list[LiveSession]) -> None:
        running: list[asyncio.Task[Any]] = []
        for session in sessions:
            running += session.tasks()
            session.close()
        if running:
            _, pending = await asyncio.wait(running, timeout=CLOSE_TIMEOUT)
            if pending:
                log.warning("%d turn(s) did not end within %g s", len(pending), CLOSE_TIMEOUT)
        for session in sessions:
            if session.agent is not None:
                try:
                    await session.agent.close()
                except Exception:
                    log.exception("closing session %s failed", session.session_id)
        await asyncio.gather(*(mcp.stop(s) for s in sessions))  # every MCP child gone

    async def aclose(self) -> None:
        """Close every session (their turns end together), then the store."""
        sessions, self._live = list(self._live.values()), {}
        await self._close(sessions)
        if self._store is not None:
            await self._store.close()
            self._store = None
