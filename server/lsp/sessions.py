"""Sessions of one server process: the core's ``SessionManager`` plus what the LSP face adds.

- Without a usable model the server still starts. ``agent/newSession`` still answers (the session
  waits for a model); a turn then fails with -32603 and the two ways forward. Each turn retries, so
  fixing ``.agentls.toml`` takes effect without a restart.
- Command-only clients (Helix) have no session ids: each workspace root gets one "inline" session,
  used by ``@agent`` code actions and by commands given without a ``sessionId``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from agentls.agent.config import ConfigError

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.agent.sessions.store import SessionRecord
    from agentls.server.lsp.server import AgentServer
    from agentls.server.manager import SessionManager

log = logging.getLogger("agentls.lsp.sessions")


class ModelUnavailable(JsonRpcException):
    CODE = -32603


class StoreProblem(JsonRpcException):
    """The session store cannot serve the request (damaged beyond repair, read-only, a directory, another
    process driving the session): -32603 with a message naming the file, never a traceback."""

    CODE = -32603


Handler = Callable[["AgentServer", Any], Awaitable[dict[str, Any]]]


def store_errors(handler: Handler) -> Handler:
    """``handler`` with the store's own errors answered in words (and ``data.reason``)."""
    from agentls.agent.sessions.lease import SessionBusy
    from agentls.agent.sessions.schema import StoreError

    @functools.wraps(handler)
    async def wrapped(ls: AgentServer, raw: Any) -> dict[str, Any]:
        try:
            return await handler(ls, raw)
        except SessionBusy as exc:
            raise StoreProblem(f"agentls: {exc}", data={"reason": "sessionBusy",
                                                         "runningElsewhere": exc.holder.to_json()}) from None
        except StoreError as exc:
            raise StoreProblem(f"agentls: {exc}", data={"reason": "sessionStore"}) from None

    return wrapped


def _no_model(exc: ConfigError) -> ModelUnavailable:
    return ModelUnavailable(f"agentls cannot run a turn: {exc}")


class Sessions:
    def __init__(self, ls: AgentServer) -> None:
        self._ls = ls
        self._manager: SessionManager | None = None
        self._waiting: dict[str, tuple[Path, str | None]] = {}  # sessions created before a model was usable
        self._inline: dict[Path, str] = {}
        self._seen: set[str] = set()
        self._noticed_local = False

    @property
    def manager(self) -> SessionManager:
        if self._manager is None:
            from agentls.server.lsp.host import LspHost
            from agentls.server.manager import SessionManager

            ls = self._ls
            db = ls.settings_for(ls.root).session_db
            self._manager = SessionManager(settings_for=ls.settings_for, default_cwd=ls.root,
                                           host_factory=lambda sid, cwd: LspHost(ls, sid, cwd),
                                           db_path=Path(db).expanduser() if db else None,
                                           on_notice=lambda text: ls.show(types.MessageType.Warning,
                                                                          f"agentls: {text}"))
        return self._manager

    async def create(self, cwd: Path | None = None, system_message: str | None = None) -> str:
        """A new session id. Its agent exists unless no model can be resolved (then it waits for one)."""
        import uuid

        sid = uuid.uuid4().hex
        cwd = (cwd or self._ls.root).resolve()
        try:
            await self._build(sid, cwd, system_message)
        except ModelUnavailable as exc:
            self._waiting[sid] = (cwd, system_message)
            self._ls.show(types.MessageType.Warning, exc.message)
        return sid

    async def _build(self, sid: str, cwd: Path, system_message: str | None) -> AIAgent:
        try:
            agent = await self.manager.new_session(cwd, system_message, session_id=sid)
        except ConfigError as exc:
            raise _no_model(exc) from None
        self._seen.add(sid)
        if agent.provider_name == "local" and not self._noticed_local:
            from agentls.agent.local import LOCAL_MODEL_NOTICE

            self._noticed_local = True
            self._ls.show(types.MessageType.Info, LOCAL_MODEL_NOTICE)
        return agent

    async def get(self, session_id: str, where: str) -> AIAgent:
        """The session's agent (loaded from the store if needed). Unknown ids are -32602."""
        from agentls.server.manager import UnknownSession

        waiting = self._waiting.get(session_id)
        if waiting is not None:
            agent = await self._build(session_id, *waiting)
            del self._waiting[session_id]
            return agent
        try:
            agent = await self.manager.get(session_id)
            self._seen.add(session_id)
            return agent
        except UnknownSession as exc:
            raise JsonRpcInvalidParams(f"{where}: {exc}") from None
        except ConfigError as exc:
            raise _no_model(exc) from None

    def live(self, session_id: str) -> AIAgent | None:
        return self._manager.live(session_id) if self._manager is not None else None

    def known(self, session_id: str) -> bool:
        return session_id in self._waiting or self.live(session_id) is not None

    async def inline(self, root: Path | None = None) -> tuple[str, AIAgent]:
        """The workspace's inline session (created on first use)."""
        root = (root or self._ls.root).resolve()
        sid = self._inline.get(root)
        if sid is None:
            sid = await self.create(root)
            self._inline[root] = sid
        return sid, await self.get(sid, "agent.codeAction")

    def set_inline(self, root: Path, session_id: str) -> None:
        self._inline[root.resolve()] = session_id

    def interrupt_all(self) -> bool:
        """Interrupt every running turn of this server; True when there was one."""
        agents = [self.live(sid) for sid in self._seen]
        interrupted = [agent.interrupt() for agent in agents if agent is not None]
        return any(interrupted)

    async def list(self, cwd: str | None, query: str | None, cursor: str | None
                   ) -> tuple[list[SessionRecord], str | None]:
        try:
            return await self.manager.list_sessions(cwd=cwd, query=query, cursor=cursor)
        except ValueError as exc:
            raise JsonRpcInvalidParams(f"agent/listSessions: {exc}; pass a nextCursor from an earlier answer") \
                from None

    async def aclose(self) -> None:
        if self._manager is not None:
            await self._manager.aclose()
