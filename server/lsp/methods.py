"""The ``agent/*`` requests, shared by the request handlers and ``workspace/executeCommand``.

Each takes the raw params and a ``where`` (the method or command name, for error messages) and
returns the result object of the table in docs/protocol.md. Sessions and turns are the runtime's
(``server/runtime``); this module translates.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from . import lookup, mcp, turns
from .params import MAX_PROMPT_CHARS, Params
from ..runtime import busy, tree, turns as runtime_turns
from ..runtime.live import Steer

if TYPE_CHECKING:
    from .server import AgentServer
    from ..runtime.live import LiveSession


async def new_session(ls: AgentServer, raw: Any, where: str = "agent/newSession") -> dict[str, Any]:
    p = Params(where, raw)
    cwd = p.directory("cwd")
    system_message = p.optional_string("systemMessage", limit=100_000)
    mcp_servers = p.raw.get("mcpServers")
    if mcp_servers is not None and not isinstance(mcp_servers, list | dict):
        raise p.invalid("'mcpServers' must be a list of servers or an object of them (see docs/mcp.md)")
    return {"sessionId": (await lookup.create(ls, cwd, system_message, mcp_servers)).session_id}


async def turn(ls: AgentServer, raw: Any, where: str = "agent/turn", *, show_answer: bool = False) -> dict[str, Any]:
    p = Params(where, raw)
    session_id = p.session_id()
    prompt = p.prompt()
    task_id = p.optional_string("taskId", limit=200)
    token = p.token()
    session = await lookup.session(ls, session_id, where)
    prompt = await mcp.prepare(session, prompt, where)  # an MCP prompt's /command, @server:uri mentions
    prompt = _with_editor(p, session, prompt)
    result = await turns.run(ls, session, prompt, task_id=task_id, token=token, show_answer=show_answer)
    await tree.remember(ls.sessions, session)  # a mode exit_plan chose, the model of the turn
    return result


def _with_editor(p: Params, session: LiveSession, prompt: Any) -> Any:
    """The prompt with the editor's ``context`` (active file, selection) as a block (agent/editor_context.py);
    the core reads its ``resource_link``s through the editor's buffers (agent/prompt_blocks.py)."""
    from agentls.agent.editor_context import ContextError, render, with_context

    try:
        block = render(p.raw.get("context"), session.cwd)
    except ContextError as exc:
        raise p.invalid(str(exc)) from None
    return with_context(prompt, block)


async def steer(ls: AgentServer, raw: Any, where: str = "agent/steer") -> dict[str, Any]:
    p = Params(where, raw)
    session_id = p.session_id()
    text = p.string("text", limit=MAX_PROMPT_CHARS)
    session = await lookup.session(ls, session_id, where)
    steered = session.steer(text)
    if steered is Steer.INJECTED:
        return {"outcome": "queued"}
    if steered is Steer.FAILED:
        raise JsonRpcInvalidParams(f"{where}: the session {session_id!r} is closed")
    turns.background(ls, session, text)
    return {"outcome": "startedNewTurn"}


async def interrupt(ls: AgentServer, raw: Any, where: str = "agent/interrupt") -> dict[str, Any]:
    p = Params(where, raw)
    session = await lookup.session(ls, p.session_id(), where)
    return {"interrupted": session.interrupt()}


async def compress(ls: AgentServer, raw: Any, where: str = "agent/compress") -> dict[str, Any]:
    p = Params(where, raw)
    session_id = p.session_id()
    focus = p.optional_string("focus", limit=10_000)
    keep_last = p.integer("keepLast", minimum=0, maximum=10_000)
    preview = p.boolean("preview")
    aggressive = p.boolean("aggressive")
    _, agent = await lookup.agent(ls, session_id, where)
    # While a turn runs, the core compresses at the turn's next safe boundary (or at its end).
    out = await agent.compress(focus=focus, keep_last=keep_last, preview=preview, aggressive=aggressive)
    if "error" in out or "tokensBefore" not in out:
        raise JsonRpcInternalError(f"{where}: compression failed: {out.get('error', 'no report')}; "
                                   "the transcript is unchanged (see the server log)")
    result = {k: out[k] for k in ("tokensBefore", "tokensAfter", "messagesBefore", "messagesAfter")}
    if out.get("summary"):
        result["summary"] = out["summary"]
    return result


async def list_sessions(ls: AgentServer, raw: Any, where: str = "agent/listSessions") -> dict[str, Any]:
    p = Params(where, raw)
    cwd = p.optional_string("cwd", limit=4096)
    if cwd is not None:
        from .params import uri_to_path

        cwd = str((uri_to_path(cwd) if cwd.startswith("file:") else Path(cwd).expanduser()).resolve())
    query = p.optional_string("query", limit=1000)
    cursor = p.optional_string("cursor", limit=1000)
    from agentls.agent.sessions.records import BadCursor

    try:
        sessions, next_cursor = await ls.sessions.listing(cwd=cwd, query=query, cursor=cursor)
    except BadCursor as exc:
        raise JsonRpcInvalidParams(f"{where}: {exc}; pass a nextCursor from an earlier answer") from None
    result: dict[str, Any] = {"sessions": sessions}
    if next_cursor:
        result["nextCursor"] = next_cursor
    return result


async def load_session(ls: AgentServer, raw: Any, where: str = "agent/loadSession") -> dict[str, Any]:
    from agentls.agent.replay import replay_updates

    p = Params(where, raw)
    session_id = p.session_id()
    _, agent = await lookup.agent(ls, session_id, where)
    messages = [dict(m) for m in agent.messages]
    if ls.features.updates:
        for update in replay_updates(agent.messages):
            ls.notify("agent/update", {"sessionId": session_id, "update": update})
    result: dict[str, Any] = {"sessionId": session_id, "messages": messages, "mode": agent.policy.mode}
    holder = await ls.sessions.running_elsewhere(session_id)
    if holder is not None:  # readable, but a turn here is refused until that one ends
        result["runningElsewhere"] = busy.running_elsewhere(holder)
    return result


async def undo(ls: AgentServer, raw: Any, where: str = "agent/undo") -> dict[str, Any]:
    from agentls.agent.rewind import RewindRefused

    p = Params(where, raw)
    session_id = p.session_id()
    count = p.integer("turns", 1, minimum=1, maximum=10_000) or 1
    force = p.boolean("force")
    session, agent = await lookup.agent(ls, session_id, where)
    try:  # after the turns sent before it
        restored = await runtime_turns.serialized(session, lambda: agent.undo(count, force=force))
    except RewindRefused as exc:
        raise JsonRpcInvalidParams(f"{where}: {exc}", data={"reason": "undoRefused", "conflicts": exc.conflicts}) \
            from None
    return {"restoredFiles": restored or []}
