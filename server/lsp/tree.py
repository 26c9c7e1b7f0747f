"""``agent/forkSession``, ``agent/rewind``, ``agent/setMode`` and ``agent/deleteSession`` (docs/protocol.md):
the runtime's session tree (server/runtime/tree.py) on the LSP face."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from . import lookup
from .params import Params
from ..runtime import tree
from ..runtime import turns as runtime_turns
from ..runtime.registry import BadConfig, NoModel, UnknownSession

if TYPE_CHECKING:
    from .server import AgentServer

MODES = tree.MODES


async def fork_session(ls: AgentServer, raw: Any, where: str = "agent/forkSession") -> dict[str, Any]:
    p = Params(where, raw)
    session_id = p.session_id()
    at = p.optional_string("atMessageId", limit=200)
    try:
        forked = await tree.fork(ls.sessions, session_id, at_message_id=at)
    except UnknownSession:
        raise JsonRpcInvalidParams(f"{where}: there is no session {session_id!r}; pick one from listSessions") \
            from None
    except tree.UnknownMessage as exc:
        raise JsonRpcInvalidParams(f"{where}: {exc}") from None
    except (NoModel, BadConfig) as exc:
        raise lookup.ModelUnavailable(str(exc)) from None
    record = await (await ls.sessions.store()).get_session(forked.session_id)
    return {"sessionId": forked.session_id, "title": record.title if record else None, "forkedFrom": session_id,
            "mode": tree.current_state(forked)["mode"]}


async def rewind(ls: AgentServer, raw: Any, where: str = "agent/rewind") -> dict[str, Any]:
    from agentls.agent.rewind import RewindRefused, RewindResult

    p = Params(where, raw)
    session_id = p.session_id()
    count = p.integer("turns", 1, minimum=1, maximum=10_000) or 1
    force = p.boolean("force")
    session, agent = await lookup.agent(ls, session_id, where)
    try:
        result: RewindResult | None = await runtime_turns.serialized(session, lambda: agent.rewind(count, force=force))
    except RewindRefused as exc:
        raise JsonRpcInvalidParams(f"{where}: {exc}", data={"reason": "rewindRefused", "conflicts": exc.conflicts}) \
            from None
    if result is None:
        raise JsonRpcInternalError(f"{where}: the session was cancelled before the rewind ran; nothing changed")
    return result.to_json()


async def set_mode(ls: AgentServer, raw: Any, where: str = "agent/setMode") -> dict[str, Any]:
    p = Params(where, raw)
    session_id = p.session_id()
    mode = p.string("mode", limit=50)
    if mode not in MODES:
        raise JsonRpcInvalidParams(f"{where}: unknown mode {mode!r}; the modes are {', '.join(MODES)}")
    session = await lookup.session(ls, session_id, where)
    session.mode = mode
    if session.agent is not None:
        session.agent.set_mode(mode)
    await tree.remember(ls.sessions, session)
    if ls.features.updates:
        ls.notify("agent/update", {"sessionId": session_id,
                                   "update": {"sessionUpdate": "current_mode_update", "currentModeId": mode}})
    return {"mode": mode}


async def delete_session(ls: AgentServer, raw: Any, where: str = "agent/deleteSession") -> dict[str, Any]:
    p = Params(where, raw)
    session_id = p.session_id()
    try:
        removed = await tree.delete(ls.sessions, session_id)
    except UnknownSession:
        raise JsonRpcInvalidParams(f"{where}: there is no stored session {session_id!r}") from None
    except tree.SessionRunning as exc:
        raise JsonRpcInternalError(f"{where}: {exc}", data={"reason": "sessionBusy"}) from None
    for root, inline_id in list(ls.inline.items()):
        if inline_id in removed:
            del ls.inline[root]
    return {"deleted": removed}
