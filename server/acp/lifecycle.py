"""ACP's side of the runtime's sessions: the face's settings and hosts, and session lookups with the
errors ACP clients expect (``-32602`` bad params, ``-32002`` unknown stored session, ``-32000`` no model)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp.interfaces import Client

from agentls.agent.config import ConfigError, Settings, load_settings
from .capabilities import ClientState
from .errors import auth_required, internal, invalid_params, not_found
from .host import AcpHost
from .stdio import LineTransport
from .updates import UpdateSink
from ..runtime.live import LiveSession
from ..runtime.registry import BadConfig, NoModel, SessionRegistry, UnknownSession

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.agent.host import Host

log = logging.getLogger("agentls.acp")

NO_MODEL = "agentls has no model to use: set an API key and a model, or install the local model"


class AcpFace:
    """The runtime's ``Face`` for one ACP connection."""

    def __init__(self, conn: Client, transport: LineTransport, state: ClientState) -> None:
        self._conn = conn
        self._transport = transport
        self._state = state

    def settings_for(self, cwd: Path) -> Settings:
        return load_settings(cwd)

    def sink(self, session_id: str) -> UpdateSink:
        return UpdateSink(self._conn, self._transport, session_id, self._state.caps)

    def mcp_servers(self) -> Any:
        return None  # an ACP client names its servers per session (session/new, load, resume)

    def host_for(self, session: LiveSession) -> Host:
        return AcpHost(self._conn, session.session_id, session.cwd, self._state.caps, self.sink(session.session_id),
                       session.control)

    def registry(self) -> SessionRegistry:
        try:
            db = load_settings().session_db
        except ConfigError:
            db = None
        return SessionRegistry(self, db_path=Path(db).expanduser() if db else None)


def absolute(cwd: str, *, existing: bool = True) -> Path:
    """``cwd`` resolved; it must be absolute, and an existing directory when ``existing``."""
    path = Path(cwd)
    if not path.is_absolute():
        raise invalid_params(f"cwd must be an absolute path, not {cwd!r}")
    if existing and not path.is_dir():
        raise invalid_params(f"cwd {cwd!r} is not a directory")
    return path.resolve()


def roots(directories: list[str] | None) -> tuple[Path, ...] | None:
    """``additionalDirectories`` as extra workspace roots (None when not given); ``-32602`` names a bad one."""
    from agentls.agent.paths import OutsideWorkspace, extra_root

    if not directories:
        return None
    try:
        return tuple(dict.fromkeys(extra_root(d) for d in directories[:32]))
    except OutsideWorkspace as exc:
        raise invalid_params(f"additionalDirectories: {exc}") from None


def _servers(mcp_servers: list[Any] | None) -> list[dict[str, Any]]:
    """The client's ``McpServer`` objects as plain dicts (started with the session: server/runtime/mcp.py)."""
    return [s.model_dump(by_alias=True, exclude_none=True) if hasattr(s, "model_dump") else dict(s)
            for s in mcp_servers or []]


def _logged(session: LiveSession) -> LiveSession:
    for notice in session.notices:
        log.warning("session %s: %s", session.session_id, notice.text)
    return session


def find(sessions: SessionRegistry, session_id: str) -> LiveSession:
    session = sessions.find(session_id)
    if session is None:
        raise invalid_params(f"unknown session {session_id!r}: create one with session/new, or open a stored "
                             "one with session/load or session/resume")
    return session


async def create(sessions: SessionRegistry, cwd: str, mcp_servers: list[Any] | None,
                 directories: list[str] | None = None) -> LiveSession:
    extra = roots(directories) or ()
    try:
        return _logged(await sessions.create(absolute(cwd), mcp_servers=_servers(mcp_servers), extra_roots=extra))
    except BadConfig as exc:
        raise invalid_params(str(exc)) from None


async def open_stored(sessions: SessionRegistry, session_id: str, cwd: str,
                      mcp_servers: list[Any] | None, directories: list[str] | None = None) -> LiveSession:
    """A stored (or live) session for ``session/load`` and ``session/resume``."""
    absolute(cwd, existing=False)  # a stored session keeps the directory it was created in
    extra = roots(directories)
    try:
        return _logged(await sessions.open(session_id, mcp_servers=_servers(mcp_servers), extra_roots=extra))
    except UnknownSession:
        raise not_found(f"there is no stored session {session_id!r}; pick one from session/list") from None
    except NoModel as exc:
        raise auth_required(NO_MODEL, str(exc)) from None
    except BadConfig as exc:
        raise invalid_params(str(exc)) from None


async def fork(sessions: SessionRegistry, session_id: str, cwd: str, mcp_servers: list[Any] | None,
               meta: Any = None, directories: list[str] | None = None) -> LiveSession:
    """``session/fork``: the stored transcript copied into a new session (up to ``_meta.agentls.atMessageId``)."""
    from ..runtime import tree

    absolute(cwd, existing=False)
    at = meta.get("atMessageId") if isinstance(meta, dict) else None
    if at is not None and not isinstance(at, str):
        raise invalid_params("_meta.agentls.atMessageId must be a message id (a string)")
    try:
        return _logged(await tree.fork(sessions, session_id, at_message_id=at, mcp_servers=_servers(mcp_servers),
                                       extra_roots=roots(directories) or ()))
    except UnknownSession:
        raise not_found(f"there is no session {session_id!r} to fork; pick one from session/list") from None
    except tree.UnknownMessage as exc:
        raise invalid_params(str(exc)) from None
    except NoModel as exc:
        raise auth_required(NO_MODEL, str(exc)) from None
    except BadConfig as exc:
        raise invalid_params(str(exc)) from None


async def delete(sessions: SessionRegistry, session_id: str) -> list[str]:
    from ..runtime import tree

    try:
        return await tree.delete(sessions, session_id)
    except UnknownSession:
        raise not_found(f"there is no stored session {session_id!r}; pick one from session/list") from None
    except tree.SessionRunning as exc:
        raise internal(str(exc), {"reason": "sessionBusy"}) from None


async def agent(sessions: SessionRegistry, session: LiveSession) -> AIAgent:
    try:
        return await sessions.agent(session)
    except NoModel as exc:
        raise auth_required(NO_MODEL, str(exc)) from None
    except BadConfig as exc:
        raise invalid_params(str(exc)) from None


async def listing(sessions: SessionRegistry, cwd: str | None, cursor: str | None
                  ) -> tuple[list[dict[str, Any]], str | None]:
    from agentls.agent.sessions.records import BadCursor

    where = str(absolute(cwd, existing=False)) if cwd else None
    try:
        return await sessions.listing(cwd=where, cursor=cursor)
    except BadCursor as exc:
        raise invalid_params(f"bad cursor: {exc}") from None
