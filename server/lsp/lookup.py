"""From the wire's session ids to the runtime's live sessions, with LSP's errors.

- An unknown id is -32602. A session waiting for a model gets one at each call that needs it; while
  none resolves, the call answers -32603 with the two ways forward (fixing ``.agentls.toml`` takes
  effect without a restart).
- Command-only clients (Helix) have no session ids: each workspace root gets one *inline* session, used
  by ``@agent`` code actions and by commands given without a ``sessionId``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ..runtime.registry import BadConfig, NoModel, UnknownSession

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from .server import AgentServer
    from ..runtime.live import LiveSession

log = logging.getLogger("agentls.lsp")


class ModelUnavailable(JsonRpcException):
    CODE = -32603


class StoreProblem(JsonRpcException):
    """The session store cannot serve the request (damaged beyond repair, read-only, a directory, another
    process driving the session): -32603 with a message naming the file, never a traceback."""

    CODE = -32603


Result = TypeVar("Result")


def store_errors(handler: Callable[..., Awaitable[Result]]) -> Callable[..., Awaitable[Result]]:
    """``handler`` with the store's own errors answered in words (and ``data.reason``)."""
    from agentls.agent.sessions.lease import SessionBusy
    from agentls.agent.sessions.schema import StoreError
    from ..runtime.busy import busy_data

    @functools.wraps(handler)
    async def wrapped(*args: Any) -> Result:
        try:
            return await handler(*args)
        except SessionBusy as exc:
            raise StoreProblem(f"agentls: {exc}", data=busy_data(exc)) from None
        except StoreError as exc:
            raise StoreProblem(f"agentls: {exc}", data={"reason": "sessionStore"}) from None

    return wrapped


def _shown(ls: AgentServer, session: LiveSession) -> LiveSession:
    from . import mcp

    notices, session.notices = session.notices, []
    ls.show_notices(notices)
    mcp.watch(ls, session)
    return session


async def create(ls: AgentServer, cwd: Path | None = None, system_message: str | None = None,
                 mcp_servers: Any = None) -> LiveSession:
    """A new session. Without a model it is still created (it waits for one) and a warning says why.
    ``mcp_servers``: its own MCP servers (``agent/newSession``), started in the background."""
    servers = [{**(v if isinstance(v, dict) else {"entry": v}), "name": k} for k, v in mcp_servers.items()] \
        if isinstance(mcp_servers, dict) else list(mcp_servers or [])
    try:
        session = await ls.sessions.create(cwd or ls.root, system_message=system_message, mcp_servers=servers,
                                           mcp_source="agent/newSession")
    except BadConfig as exc:
        raise ModelUnavailable(str(exc)) from None
    if session.no_model is not None:
        ls.show(types.MessageType.Warning, session.no_model)
    return _shown(ls, session)


async def session(ls: AgentServer, session_id: str, where: str) -> LiveSession:
    """The session with its agent (a stored one is opened). -32602 for unknown ids, -32603 without a model."""
    try:
        live = ls.sessions.find(session_id)
        if live is None:
            return _shown(ls, await ls.sessions.open(session_id))
        await ls.sessions.agent(live)
        return _shown(ls, live)
    except UnknownSession as exc:
        raise JsonRpcInvalidParams(f"{where}: {exc}: create one with newSession or pick one from "
                                   "listSessions") from None
    except (NoModel, BadConfig) as exc:
        raise ModelUnavailable(str(exc)) from None


async def agent(ls: AgentServer, session_id: str, where: str) -> tuple[LiveSession, AIAgent]:
    live = await session(ls, session_id, where)
    assert live.agent is not None
    return live, live.agent


async def inline(ls: AgentServer, root: Path | None = None) -> LiveSession:
    """The workspace's inline session (created on first use)."""
    root = (root or ls.root).resolve()
    session_id = ls.inline.get(root)
    if session_id is None:
        session_id = (await create(ls, root)).session_id
        ls.inline[root] = session_id
    return await session(ls, session_id, "agent.codeAction")


def interrupt_all(ls: AgentServer) -> bool:
    """Interrupt every running turn of this server; True when there was one."""
    return any([s.interrupt() for s in ls.sessions.live()])
