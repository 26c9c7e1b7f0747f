"""From the wire's session ids to the runtime's live sessions, with LSP's errors.

- An unknown id is -32602. A session waiting for a model gets one at each call that needs it; while
  none resolves, the call answers -32603 with the two ways forward (fixing ``.agentls.toml`` takes
  effect without a restart).
- Command-only clients (Helix) have no session ids: each workspace root gets one *inline* session, used
  by ``@agent`` code actions and by commands given without a ``sessionId``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from agentls.server.runtime import turns
from agentls.server.runtime.registry import BadConfig, NoModel, UnknownSession

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.server.lsp.server import AgentServer
    from agentls.server.runtime.live import LiveSession

log = logging.getLogger("agentls.lsp")


class ModelUnavailable(JsonRpcException):
    CODE = -32603


def _shown(ls: AgentServer, session: LiveSession) -> LiveSession:
    notices, session.notices = session.notices, []
    ls.show_notices(notices)
    return session


async def create(ls: AgentServer, cwd: Path | None = None, system_message: str | None = None) -> LiveSession:
    """A new session. Without a model it is still created (it waits for one) and a warning says why."""
    try:
        session = await ls.sessions.create(cwd or ls.root, system_message=system_message)
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
    return any([turns.interrupt(s) for s in ls.sessions.live()])
