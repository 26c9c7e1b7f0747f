"""Live sessions for a face: one ``AIAgent`` per session, sharing one store and one HTTP client."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentls.agent.agent import AIAgent
from agentls.agent.config import Settings
from agentls.agent.host import Host
from agentls.agent.resolve import agent_from_settings
from agentls.agent.sessions.lease import LeaseHolder
from agentls.agent.sessions.store import SessionRecord, SessionStore, default_db_path

log = logging.getLogger("agentls.server")

HostFactory = Callable[[str, Path], Host]
SettingsFor = Callable[[Path], Settings]


class UnknownSession(KeyError):
    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.session_id = session_id

    def __str__(self) -> str:
        return f"unknown session {self.session_id!r}: create one with newSession or pick one from listSessions"


class SessionManager:
    def __init__(self, *, settings_for: SettingsFor, host_factory: HostFactory, default_cwd: Path,
                 db_path: Path | None = None, on_notice: Callable[[str], None] | None = None,
                 **agent_overrides: Any) -> None:
        self._on_notice = on_notice
        self._settings_for = settings_for
        self._host_factory = host_factory
        self.default_cwd = default_cwd
        self._db_path = db_path
        self._overrides = agent_overrides
        self._agents: dict[str, AIAgent] = {}
        self.store: SessionStore | None = None
        self._open_lock = asyncio.Lock()

    async def _ensure_open(self) -> SessionStore:
        """The store, opened once; concurrent first requests wait for the same open. A store that cannot be
        opened raises ``StoreError`` (naming the file) now and is tried again by the next request."""
        async with self._open_lock:
            if self.store is None:
                store = SessionStore(self._db_path or default_db_path())
                await store.open()
                self.store = store  # published only once it is open
                for notice in store.notices:  # a damaged file moved aside, a read-only store
                    if self._on_notice is not None:
                        self._on_notice(notice)
        return self.store

    async def running_elsewhere(self, session_id: str) -> LeaseHolder | None:
        """The other process running a turn of this session right now, if any."""
        store = await self._ensure_open()
        return await store.lease_holder(session_id)

    def _build(self, session_id: str, cwd: Path, system_message: str | None = None) -> AIAgent:
        settings = self._settings_for(cwd)
        store = self.store
        assert store is not None
        # One keep-alive client per agent: a shared httpx pool serializes badly across many sessions.
        return agent_from_settings(settings, workspace=cwd, host=self._host_factory(session_id, cwd),
                                   session_id=session_id, session_db=store, system_message=system_message,
                                   **self._overrides)

    async def new_session(self, cwd: Path | None = None, system_message: str | None = None,
                          session_id: str | None = None) -> AIAgent:
        await self._ensure_open()
        sid = session_id or uuid.uuid4().hex
        agent = self._build(sid, (cwd or self.default_cwd).resolve(), system_message)
        self._agents[sid] = agent
        return agent

    async def get(self, session_id: str) -> AIAgent:
        """The live agent, or the stored session loaded into a new one."""
        agent = self._agents.get(session_id)
        if agent is not None:
            return agent
        store = await self._ensure_open()
        record = await store.get_session(session_id)
        if record is None:
            raise UnknownSession(session_id)
        agent = self._build(session_id, Path(record.cwd))
        await agent.__aenter__()
        self._agents[session_id] = agent
        return agent

    def live(self, session_id: str) -> AIAgent | None:
        return self._agents.get(session_id)

    async def list_sessions(self, *, cwd: str | None = None, query: str | None = None, cursor: str | None = None,
                            limit: int = 50) -> tuple[list[SessionRecord], str | None]:
        store = await self._ensure_open()
        return await store.list_sessions(cwd=cwd, query=query, limit=limit, cursor=cursor)

    async def close_session(self, session_id: str) -> bool:
        agent = self._agents.pop(session_id, None)
        if agent is None:
            return False
        agent.interrupt()
        await agent.close()
        return True

    async def aclose(self) -> None:
        for sid in list(self._agents):
            try:
                await self.close_session(sid)
            except Exception:
                log.exception("closing session %s failed", sid)
        if self.store is not None:
            await self.store.close()
            self.store = None
