"""The server's LSP features, registered on an ``AgentServer``. Thin: each hands over to a module."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from server.lsp import commands, methods
from server.lsp.capabilities import CODE_ACTION_KIND
from server.lsp.server import AgentServer


def register(server: AgentServer) -> None:
    @server.feature("agent/newSession")
    async def new_session(ls: AgentServer, params: Any) -> dict[str, Any]:
        return await methods.new_session(ls, params)

    @server.feature("agent/turn")
    async def turn(ls: AgentServer, params: Any) -> dict[str, Any]:
        return await methods.turn(ls, params)

    @server.feature("agent/steer")
    async def steer(ls: AgentServer, params: Any) -> dict[str, Any]:
        return await methods.steer(ls, params)

    @server.feature("agent/interrupt")
    async def interrupt(ls: AgentServer, params: Any) -> dict[str, Any]:
        return await methods.interrupt(ls, params)

    @server.feature("agent/compress")
    async def compress(ls: AgentServer, params: Any) -> dict[str, Any]:
        return await methods.compress(ls, params)

    @server.feature("agent/listSessions")
    async def list_sessions(ls: AgentServer, params: Any) -> dict[str, Any]:
        return await methods.list_sessions(ls, params)

    @server.feature("agent/loadSession")
    async def load_session(ls: AgentServer, params: Any) -> dict[str, Any]:
        return await methods.load_session(ls, params)

    @server.feature("agent/undo")
    async def undo(ls: AgentServer, params: Any) -> dict[str, Any]:
        return await methods.undo(ls, params)

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
    server = AgentServer(channel)
    register(server)
    return server
