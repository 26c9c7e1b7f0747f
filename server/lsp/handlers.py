"""The LSP face put together: an ``AgentServer`` with its host and commands, and its features
registered. Thin: each hands over to a module."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from lsprotocol import types

from . import commands, mcp, methods, tree, workflows
from .capabilities import CODE_ACTION_KIND
from .host import LspHost
from .server import AgentServer
from .lookup import store_errors


# The agent/* requests: each takes (server, raw params) and validates the params itself.
AGENT_METHODS: dict[str, Callable[[AgentServer, Any], Awaitable[dict[str, Any]]]] = {
    "agent/newSession": methods.new_session,
    "agent/turn": methods.turn,
    "agent/steer": methods.steer,
    "agent/interrupt": methods.interrupt,
    "agent/compress": methods.compress,
    "agent/listSessions": methods.list_sessions,
    "agent/loadSession": methods.load_session,
    "agent/undo": methods.undo,
    "agent/listMcpServers": mcp.list_servers,
    "agent/forkSession": tree.fork_session,
    "agent/rewind": tree.rewind,
    "agent/setMode": tree.set_mode,
    "agent/deleteSession": tree.delete_session,
    "agent/listCommands": workflows.list_commands,
}


def _tracked(handler: Callable[[AgentServer, Any], Awaitable[dict[str, Any]]]
             ) -> Callable[[AgentServer, Any], Awaitable[dict[str, Any]]]:
    """The handler, counted in ``server.requests`` while it runs (shutdown waits for their answers)."""
    async def run(ls: AgentServer, params: Any) -> dict[str, Any]:
        with ls.handling():
            return await handler(ls, params)
    return run


def register(server: AgentServer) -> None:
    for name, handler in AGENT_METHODS.items():
        server.feature(name)(_tracked(store_errors(handler)))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AgentServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.documents.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AgentServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.documents.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AgentServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.documents.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AgentServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.documents.closed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[CODE_ACTION_KIND], resolve_provider=False))
    def code_action(ls: AgentServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return commands.code_actions(ls, params)


def create_server(channel: Any) -> AgentServer:
    server = AgentServer(channel, host=LspHost, execute=commands.execute)
    register(server)
    return server
