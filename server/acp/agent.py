"""The ``acp.Agent``: thin handlers over the runtime (``server/runtime``) and the small feature modules."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path
from typing import Any

from acp import Agent, run_agent
from acp.interfaces import Client
from acp.schema import (
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from agentls.agent.replay import replay_updates
from . import auth, commands, ext, lifecycle, modes, raw, turns
from .capabilities import ClientState, initialize_result
from .lifecycle import AcpFace
from .errors import invalid_params, store_errors
from .stdio import LineTransport
from ..runtime import busy, tree, turns as runtime_turns
from ..runtime.live import LiveSession
from ..runtime.registry import SessionRegistry

log = logging.getLogger("agentls.acp")


def _blocks(prompt: list[Any]) -> list[dict[str, Any]]:
    return [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in prompt]


class AgentlsAcp(Agent):
    """Thin handlers: ACP in, the runtime's sessions and turns (``server/runtime``) out."""

    def __init__(self, transport: LineTransport, state: ClientState) -> None:
        self._transport = transport
        self._state = state
        self._face: AcpFace | None = None
        self._sessions: SessionRegistry | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._watched: set[str] = set()  # sessions whose MCP prompts update the slash commands
        self._commands_sent: dict[str, dict[str, Any]] = {}  # the last available_commands_update of each session

    def on_connect(self, conn: Client) -> None:
        self._face = AcpFace(conn, self._transport, self._state)
        self._sessions = self._face.registry()
        raw.install(conn, raw.InFlight(self._cancel_prompt), self._delete_session)

    def _cancel_prompt(self, session_id: str) -> None:
        session = self.sessions.find(session_id)
        if session is not None:
            session.cancel()

    @property
    def face(self) -> AcpFace:
        assert self._face is not None, "on_connect runs first"
        return self._face

    @property
    def sessions(self) -> SessionRegistry:
        assert self._sessions is not None, "on_connect runs first"
        return self._sessions

    def _session(self, session_id: str) -> LiveSession:
        return lifecycle.find(self.sessions, session_id)

    def _after_reply(self, session: LiveSession) -> None:
        """``available_commands_update`` once the client knows the session (this task runs after the
        handler's response is written: the response is sent before the handler's task yields)."""
        self._send_commands(session)
        self._watch_mcp(session)

    def _commands_changed(self, session: LiveSession) -> None:
        """The command files are read again at each turn (agent/workflows): a list that changed is sent again."""
        update = commands.available_commands_update(session)
        if update != self._commands_sent.get(session.session_id):
            self._send_commands(session, update)

    def _send_commands(self, session: LiveSession, update: dict[str, Any] | None = None) -> None:
        sink = self.face.sink(session.session_id)
        update = update or commands.available_commands_update(session)
        self._commands_sent[session.session_id] = update
        task = asyncio.ensure_future(sink.send(update))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _watch_mcp(self, session: LiveSession) -> None:
        """MCP prompts are slash commands: a server that comes or goes changes the list."""
        manager = session.mcp
        if manager is None or session.session_id in self._watched:
            return
        self._watched.add(session.session_id)

        def changed(what: str, conn: object) -> None:
            if what in ("ready", "prompts", "crashed", "failed", "stopped") and not session.closed:
                self._send_commands(session)

        manager.listeners.append(changed)

    # ----- connection ------------------------------------------------------------------------
    async def initialize(self, protocol_version: int, client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None, **kwargs: Any) -> InitializeResponse:
        self._state.initialized = True
        return InitializeResponse.model_validate(initialize_result())

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        meta = await auth.authenticate(method_id, Path.cwd())
        return AuthenticateResponse.model_validate({"_meta": {"agentls": meta}})

    # ----- session lifecycle -----------------------------------------------------------------
    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        with store_errors():
            session = await lifecycle.create(self.sessions, cwd, mcp_servers, additional_directories)
        self._after_reply(session)
        return NewSessionResponse.model_validate({"sessionId": session.session_id, "modes": modes.mode_state(session),
                                                  "configOptions": modes.config_options(session)})

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None,
                           **kwargs: Any) -> LoadSessionResponse | None:
        with store_errors():
            session = await lifecycle.open_stored(self.sessions, session_id, cwd, mcp_servers, additional_directories)
            agent = await lifecycle.agent(self.sessions, session)
            elsewhere = await self.sessions.running_elsewhere(session_id)
        sink = self.face.sink(session_id)
        for update in replay_updates(agent.messages, agent.root):  # the whole history, before the answer
            await sink.send(update)
        self._commands_sent[session_id] = commands.available_commands_update(session)
        await sink.send(self._commands_sent[session_id])
        self._watch_mcp(session)
        response: dict[str, Any] = {"modes": modes.mode_state(session), "configOptions": modes.config_options(session)}
        if elsewhere is not None:  # readable, but a prompt here is refused until that turn ends
            log.warning("session %s is running a turn in another process: %s", session_id, elsewhere.describe())
            response["_meta"] = {"agentls": {"runningElsewhere": busy.running_elsewhere(elsewhere)}}
        return LoadSessionResponse.model_validate(response)

    async def resume_session(self, session_id: str, cwd: str, additional_directories: list[str] | None = None,
                             mcp_servers: list[Any] | None = None, **kwargs: Any) -> ResumeSessionResponse:
        with store_errors():
            session = await lifecycle.open_stored(self.sessions, session_id, cwd, mcp_servers, additional_directories)
        self._after_reply(session)
        return ResumeSessionResponse.model_validate({"modes": modes.mode_state(session),
                                                     "configOptions": modes.config_options(session)})

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        with store_errors():
            infos, next_cursor = await lifecycle.listing(self.sessions, cwd, cursor)
        return ListSessionsResponse.model_validate({"sessions": infos, "nextCursor": next_cursor})

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        await self.sessions.close(session_id)
        return CloseSessionResponse()

    async def fork_session(self, session_id: str, cwd: str, additional_directories: list[str] | None = None,
                           mcp_servers: list[Any] | None = None, **kwargs: Any) -> ForkSessionResponse:
        with store_errors():
            session = await lifecycle.fork(self.sessions, session_id, cwd, mcp_servers, kwargs.get("agentls"),
                                           additional_directories)
        self._after_reply(session)
        return ForkSessionResponse.model_validate({"sessionId": session.session_id,
                                                   "modes": modes.mode_state(session),
                                                   "configOptions": modes.config_options(session)})

    async def _delete_session(self, params: Any) -> dict[str, Any]:
        """``session/delete`` (routed by server/acp/raw.py: the SDK has no route for it)."""
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        if not isinstance(session_id, str) or not session_id:
            raise invalid_params("session/delete needs a sessionId")
        with store_errors():
            removed = await lifecycle.delete(self.sessions, session_id)
        return {"_meta": {"agentls": {"deleted": removed}}}

    # ----- session settings ------------------------------------------------------------------
    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse | None:
        session = self._session(session_id)
        await modes.set_mode(session, self.face.sink(session_id), mode_id)
        with store_errors():
            await tree.remember(self.sessions, session)
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse | None:
        session = self._session(session_id)
        options = await modes.set_config_option(session, self.face.sink(session_id), config_id, value)
        with store_errors():
            await tree.remember(self.sessions, session)
        return SetSessionConfigOptionResponse.model_validate({"configOptions": options})

    # ----- turns -----------------------------------------------------------------------------
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self.sessions.find(session_id)
        if session is None:
            log.warning("prompt for unknown session %s refused", session_id)
            return PromptResponse(stop_reason="refusal")
        blocks = _blocks(prompt)
        if any(b.get("type") == "audio" for b in blocks):
            raise invalid_params("agentls cannot take audio (promptCapabilities.audio is false): send the words as "
                                 "text; images, files and resource links work")
        sink = self.face.sink(session_id)
        command = commands.parse(blocks, [c.name for c in commands.mcp_prompts(session)])
        meta: dict[str, Any] = {}
        with store_errors():
            if command is not None and command[0] in commands.COMMANDS:
                reason = await runtime_turns.serialized(
                    session, lambda: commands.run(self.sessions, session, sink, *command)) or "cancelled"
            elif command is not None:  # an MCP prompt: its messages are the turn's prompt
                content = await commands.mcp_prompt(session, sink, *command)
                reason = "end_turn" if content is None else await turns.prompt(self.sessions, session, sink, content,
                                                                               meta)
            else:
                from agentls.agent.mcp import mentions

                blocks = await mentions.expand(session.mcp, blocks)
                reason = await turns.prompt(self.sessions, session, sink, blocks, meta)
            await tree.remember(self.sessions, session)  # a mode exit_plan chose, the model of the turn
        self._watch_mcp(session)  # a session that got its agent (and its servers) at this prompt
        self._commands_changed(session)
        response: dict[str, Any] = {"stopReason": reason}
        if meta:
            response["_meta"] = {"agentls": meta}  # the turn's usage (PromptResponse has no field for it in v1)
        return PromptResponse.model_validate(response)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.find(session_id)
        if session is not None:
            session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        with store_errors():
            return await ext.dispatch(self.face, self.sessions, method, params)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("ignoring extension notification _%s", method)


async def run(transport: LineTransport, state: ClientState) -> None:
    """Serve until the client closes stdin (or SIGTERM), then close every session cleanly."""
    import agentls.agent.agent  # noqa: F401  (the core loads now, while the client is still busy with initialize)

    log.debug("the ACP SDK and the core are loaded")
    agent = AgentlsAcp(transport, state)

    async def end_turns() -> None:  # end of input: turns end, so the prompts still running are answered
        if agent._sessions is not None:
            for session in agent.sessions.live():
                session.cancel()

    transport.on_eof = end_turns
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    if main is not None:
        loop.add_signal_handler(signal.SIGTERM, main.cancel)
    try:
        await run_agent(agent, transport, use_unstable_protocol=True)
    except asyncio.CancelledError:
        log.info("terminated")
    finally:
        if agent._sessions is not None:
            await asyncio.shield(agent.sessions.aclose())
        await transport.close()
