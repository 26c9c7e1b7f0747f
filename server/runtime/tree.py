"""Fork, delete, and the session's settings that outlive the process (mode, model, thinking budget), the same
for both faces (docs/sessions.md "Fork, rewind, delete")."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .live import LiveSession

if TYPE_CHECKING:
    from agentls.agent.sessions.records import SessionRecord
    from .registry import SessionRegistry

log = logging.getLogger("agentls.runtime")

STATE_KEY = "agentls"  # in ``sessions.meta``: {"mode", "model", "thinkingBudget"}
MODES = ("ask", "auto-edit", "yolo", "plan")


class UnknownMessage(KeyError):
    def __str__(self) -> str:
        return (f"no message of this session has the id {self.args[0]!r}; message ids are the messageId of the "
                "chunks the session sent (a replay of session/load shows them)")


class SessionRunning(Exception):
    """The session has a turn running (here or in another process); the message says which."""


def current_state(session: LiveSession) -> dict[str, Any]:
    agent = session.agent
    state: dict[str, Any] = {"mode": agent.policy.mode if agent is not None else session.mode}
    if agent is not None:
        state["model"] = agent.model
        state["thinkingBudget"] = agent.thinking_budget
    if session.extra_roots:
        state["additionalDirectories"] = [str(r) for r in session.extra_roots]
    return state


async def remember(sessions: SessionRegistry, session: LiveSession) -> None:
    """Save the session's mode, model and thinking budget with it (once it is stored: from its first prompt)."""
    store = await sessions.store()
    if store.read_only:
        return
    record = await store.get_session(session.session_id)
    if record is None:
        return
    state = current_state(session)
    if record.meta.get(STATE_KEY) != state:
        await store.update_session(session.session_id, meta={**record.meta, STATE_KEY: state})


def saved_mode(record: SessionRecord) -> str | None:
    state = record.meta.get(STATE_KEY)
    mode = state.get("mode") if isinstance(state, dict) else None
    return mode if mode in MODES else None


def saved_roots(record: SessionRecord) -> tuple[Path, ...]:
    """The extra workspace roots stored with the session, each checked again (one gone since is dropped)."""
    from agentls.agent.paths import OutsideWorkspace, extra_root

    state = record.meta.get(STATE_KEY)
    raw = state.get("additionalDirectories") if isinstance(state, dict) else None
    out = []
    for d in raw if isinstance(raw, list) else []:
        try:
            out.append(extra_root(d if isinstance(d, str) else ""))
        except OutsideWorkspace as exc:
            log.warning("session %s: stored extra root dropped: %s", record.id, exc)
    return tuple(dict.fromkeys(out))


def restore(session: LiveSession, record: SessionRecord) -> None:
    """The stored model and thinking budget onto the session's new agent (the mode is set before it is built)."""
    state = record.meta.get(STATE_KEY)
    agent = session.agent
    if not isinstance(state, dict) or agent is None:
        return
    model = state.get("model")
    if isinstance(model, str) and model and model != agent.model:
        agent.model = model
        if model not in session.models:
            session.models.append(model)
    budget = state.get("thinkingBudget")
    if budget is None or (isinstance(budget, int) and not isinstance(budget, bool) and budget > 0):
        agent.thinking_budget = budget


def fork_title(title: str | None) -> str:
    return f"{title or 'Untitled'} (fork)"


async def fork(sessions: SessionRegistry, source_id: str, *, at_message_id: str | None = None,
               mcp_servers: Iterable[dict[str, Any]] = (), extra_roots: Iterable[Path] = ()) -> LiveSession:
    """A new session holding a copy of ``source_id``'s stored transcript (up to ``at_message_id``), linked to it.
    ``UnknownSession``, ``UnknownMessage``; a session running a turn right now is forked as saved so far."""
    from agentls.agent.rewind import fork_point
    from .registry import UnknownSession

    store = await sessions.store()
    live = sessions.find(source_id)
    if live is not None:
        await remember(sessions, live)
    record = await store.get_session(source_id)
    if record is None:
        if live is None:
            raise UnknownSession(source_id)
        if at_message_id is not None:
            raise UnknownMessage(at_message_id)
        forked = await sessions.create(live.cwd, mcp_servers=mcp_servers, mcp_source="session/fork",
                                       extra_roots=extra_roots)
        forked.mode = current_state(live)["mode"]  # nothing stored yet: a fresh session, same mode
        if forked.agent is not None:
            forked.agent.set_mode(forked.mode)
        return forked
    keep = None
    if at_message_id is not None:
        try:
            keep = fork_point(await store.load_messages(source_id), at_message_id)
        except KeyError:
            raise UnknownMessage(at_message_id) from None
    new_id = uuid.uuid4().hex
    copied = await store.fork_session(source_id, new_id, keep=keep, title=fork_title(record.title))
    log.info("session %s forked from %s (%d messages)", new_id, source_id, copied)
    return await sessions.open(new_id, mcp_servers=mcp_servers, extra_roots=extra_roots)


async def delete(sessions: SessionRegistry, session_id: str) -> list[str]:
    """Remove a stored session, its child sessions and checkpoints; closes it here first. ``UnknownSession``;
    ``SessionRunning`` while a turn of it runs (here or elsewhere): cancel it first."""
    from .registry import UnknownSession

    store = await sessions.store()
    live = sessions.find(session_id)
    if live is not None and live.busy:
        raise SessionRunning(f"session {session_id!r} is running a turn; cancel it (session/cancel) before "
                             "deleting it")
    holder = await store.lease_holder(session_id)
    if holder is not None:
        raise SessionRunning(f"session {session_id!r} is running a turn in another agentls process "
                             f"({holder.describe()}); delete it once that turn has ended")
    if await store.get_session(session_id) is None and live is None:
        raise UnknownSession(session_id)
    if live is not None:
        await sessions.close(session_id)
    return await store.delete_session(session_id)
