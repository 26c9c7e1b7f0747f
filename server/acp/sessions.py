"""The ACP sessions of one connection, on the shared ``SessionManager`` (one store, one HTTP client)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp.interfaces import Client

from agentls.agent.config import ConfigError, Settings, load_settings
from agentls.server.acp import turns
from agentls.server.acp.caps import ClientState
from agentls.server.acp.errors import auth_required, invalid_params, not_found
from agentls.server.acp.host import AcpHost
from agentls.server.acp.session import AcpSession
from agentls.server.acp.stdio import LineTransport
from agentls.server.acp.updates import UpdateSink

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.agent.host import Host
    from agentls.server.manager import SessionManager

log = logging.getLogger("agentls.acp")

CLOSE_TIMEOUT = 5.0
NO_MODEL = "agentls has no model to use: set an API key and a model, or install the local model"


def absolute(cwd: str, *, existing: bool = True) -> Path:
    """``cwd`` resolved; it must be absolute, and an existing directory when ``existing``."""
    path = Path(cwd)
    if not path.is_absolute():
        raise invalid_params(f"cwd must be an absolute path, not {cwd!r}")
    if existing and not path.is_dir():
        raise invalid_params(f"cwd {cwd!r} is not a directory")
    return path.resolve()


def _missing_model(exc: ConfigError) -> bool:
    return exc.key == "model" and exc.source == "configuration"


class Sessions:
    def __init__(self, conn: Client, transport: LineTransport, state: ClientState) -> None:
        self._conn = conn
        self._transport = transport
        self._state = state
        self._sessions: dict[str, AcpSession] = {}
        self._settings: dict[Path, Settings] = {}
        self._manager: SessionManager | None = None
        self._config_errors: dict[str, str] = {}
        self._store_notices: list[str] = []  # shown once, at the start of the next prompt's answer

    # ----- plumbing --------------------------------------------------------------------------
    @property
    def manager(self) -> SessionManager:
        if self._manager is None:
            from agentls.server.manager import SessionManager

            try:
                db = load_settings().session_db
            except ConfigError:
                db = None
            self._manager = SessionManager(settings_for=self._settings_for, host_factory=self._host_for,
                                           default_cwd=Path.cwd(), db_path=Path(db).expanduser() if db else None,
                                           on_notice=self._store_notices.append)
        return self._manager

    def _settings_for(self, cwd: Path) -> Settings:
        settings = load_settings(cwd)
        self._settings[cwd] = settings
        return settings

    def _host_for(self, session_id: str, cwd: Path) -> Host:
        session = self._sessions[session_id]
        return AcpHost(self._conn, session_id, cwd, self._state.caps, session.sink, session.control)

    def find(self, session_id: str) -> AcpSession | None:
        return self._sessions.get(session_id)

    def _register(self, session_id: str, cwd: Path, mcp_servers: list[Any] | None) -> AcpSession:
        sink = UpdateSink(self._conn, self._transport, session_id, self._state.caps)
        servers = [s.model_dump(by_alias=True, exclude_none=True) if hasattr(s, "model_dump") else dict(s)
                   for s in mcp_servers or []]
        if servers:
            log.info("session %s: %d MCP server(s) recorded; agentls does not run MCP servers yet: %s",
                     session_id, len(servers), ", ".join(str(s.get("name")) for s in servers))
        session = AcpSession(session_id, cwd, sink, mcp_servers=servers)
        try:
            session.mode = self._settings_for(cwd).approval
        except ConfigError as exc:
            raise invalid_params(f"the agentls configuration for {cwd} is invalid: {exc}") from None
        self._sessions[session_id] = session
        return session

    def _adopt(self, session: AcpSession, agent: AIAgent) -> None:
        from agentls.agent.resolve import resolve_model

        session.agent = agent
        session.cwd = agent.root
        agent.policy.mode = session.mode
        settings = self._settings.get(agent.root) or self._settings_for(agent.root)
        same_endpoint = [m for m in settings.fallback_models if not (m == "local" or m.startswith("local:"))]
        session.models = list(dict.fromkeys([agent.model, *same_endpoint, *session.models]))
        notes = [str(w) for w in getattr(settings, "warnings", ())]  # e.g. workspace settings that were ignored
        if resolve_model(settings).is_default_local:
            from agentls.agent.local import LOCAL_MODEL_NOTICE

            notes.append(LOCAL_MODEL_NOTICE)
        notes += self._store_notices
        self._store_notices.clear()
        for note in notes:
            log.warning("%s", note)
        session.notice = "\n\n".join(notes) or None

    async def _attach(self, session: AcpSession, *, stored: bool) -> None:
        try:
            if stored:
                agent = await self.manager.get(session.session_id)
            else:
                agent = await self.manager.new_session(session.cwd, session_id=session.session_id)
        except ConfigError as exc:
            if not _missing_model(exc):
                raise invalid_params(f"the agentls configuration is invalid: {exc}") from None
            self._config_errors[session.session_id] = str(exc)
            log.warning("session %s has no model yet: %s", session.session_id, exc)
            return
        self._adopt(session, agent)

    # ----- lifecycle -------------------------------------------------------------------------
    async def create(self, cwd: str, mcp_servers: list[Any] | None) -> AcpSession:
        session = self._register(uuid.uuid4().hex, absolute(cwd), mcp_servers)
        await self._attach(session, stored=False)
        return session

    async def open_stored(self, session_id: str, cwd: str, mcp_servers: list[Any] | None) -> AcpSession:
        """A stored (or live) session for ``session/load`` and ``session/resume``."""
        live = self._sessions.get(session_id)
        if live is not None and live.agent is not None:
            return live
        from agentls.server.manager import UnknownSession

        session = live or self._register(session_id, absolute(cwd, existing=False), mcp_servers)
        try:
            await self._attach(session, stored=True)
        except UnknownSession:
            self._sessions.pop(session_id, None)
            raise not_found(f"there is no stored session {session_id!r}; pick one from session/list") from None
        if session.agent is None:
            self._sessions.pop(session_id, None)
            raise auth_required(NO_MODEL, self._config_errors.get(session_id))
        return session

    async def ensure_agent(self, session: AcpSession) -> AIAgent:
        if session.agent is None:
            await self._attach(session, stored=False)
        if session.agent is None:
            raise auth_required(NO_MODEL, self._config_errors.get(session.session_id))
        return session.agent

    async def list(self, cwd: str | None, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        where = str(absolute(cwd, existing=False)) if cwd else None
        try:
            rows, next_cursor = await self.manager.list_sessions(cwd=where, cursor=cursor)
        except ValueError as exc:
            raise invalid_params(f"bad cursor: {exc}") from None
        infos = [{"sessionId": r.id, "cwd": r.cwd, "title": r.title, "updatedAt": r.updated_at} for r in rows]
        return infos, next_cursor

    async def close(self, session_id: str) -> None:
        """Cancel whatever runs in the session (its prompts answer ``cancelled``), then close its agent."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return
        session.closed = True
        turns.cancel(session)
        for task in list(session.background):
            task.cancel()
        running = [t for t in (session.turn_task, *session.background) if t is not None and not t.done()]
        if running:
            await asyncio.wait(running, timeout=CLOSE_TIMEOUT)
        if session.agent is not None:
            await self.manager.close_session(session_id)

    async def aclose(self) -> None:
        for session_id in list(self._sessions):
            try:
                await self.close(session_id)
            except Exception:
                log.exception("closing session %s failed", session_id)
        if self._manager is not None:
            await self._manager.aclose()
