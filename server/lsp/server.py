"""``AgentServer``: the pygls ``LanguageServer`` with the face's state (client features, settings, sessions)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from agentls.agent.config import Settings
from agentls.agent.version import __version__
from agentls.server.lsp import settings as lsp_settings
from agentls.server.lsp.capabilities import ClientFeatures
from agentls.server.lsp.documents import Documents, path_of
from agentls.server.lsp.protocol import AgentProtocol
from agentls.server.lsp.sessions import Sessions
from agentls.server.lsp.settings import LspOptions
from agentls.server.lsp.turns import TurnRunner
from agentls.server.lsp.wire import StdioChannel

log = logging.getLogger("agentls.lsp")


def workspace_root(params: dict[str, Any]) -> Path:
    """``rootUri``, else ``rootPath``, else the first workspace folder, else the current directory."""
    candidates: list[Path | None] = []
    if isinstance(params.get("rootUri"), str):
        candidates.append(path_of(params["rootUri"]))
    if isinstance(params.get("rootPath"), str):
        candidates.append(Path(params["rootPath"]))
    folders = params.get("workspaceFolders")
    if isinstance(folders, list) and folders and isinstance(folders[0], dict) and isinstance(folders[0].get("uri"), str):
        candidates.append(path_of(folders[0]["uri"]))
    for path in candidates:
        if path is not None and path.is_dir():
            return path.resolve()
    return Path.cwd().resolve()


class AgentServer(LanguageServer):
    protocol: AgentProtocol

    def __init__(self, channel: StdioChannel) -> None:
        super().__init__("agentls", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=AgentProtocol)
        self.channel = channel
        self.protocol.set_writer(channel)
        self.features = ClientFeatures()
        self.options = LspOptions()
        self.root = Path.cwd().resolve()
        self.init_options: dict[str, Any] = {}
        self.documents = Documents(lambda: self.workspace)
        self.sessions = Sessions(self)
        self.turns = TurnRunner(self)
        self._reported: set[str] = set()
        self.closed = False

    # ----------------------------------------------------------------- setup
    def configure(self, params: dict[str, Any]) -> None:
        self.features = ClientFeatures.parse(params.get("capabilities"))
        self.root = workspace_root(params)
        core, self.options, problems = lsp_settings.split_options(params.get("initializationOptions"))
        self.init_options = core
        for problem in problems:
            self.report_config(problem)
        self.settings_for(self.root)
        log.info("initialized: root %s, client features %s", self.root, self.features)

    def settings_for(self, cwd: Path) -> Settings:
        settings, problems = lsp_settings.load(cwd, self.init_options)
        for problem in problems:
            self.report_config(problem)
        for warning in settings.warnings:  # e.g. what a workspace file may not set
            self.report_config(warning, types.MessageType.Warning)
        return settings

    def report_config(self, problem: str, kind: types.MessageType = types.MessageType.Error) -> None:
        """A configuration problem, shown once: the server goes on with the default for that setting."""
        if problem in self._reported:
            return
        self._reported.add(problem)
        log.warning("configuration: %s", problem)
        self.show(kind, f"agentls: {problem}")

    # ----------------------------------------------------------------- messages to the user
    def show(self, kind: types.MessageType, text: str) -> None:
        if not self.channel.closed:
            self.window_show_message(types.ShowMessageParams(type=kind, message=text))

    def log(self, text: str, kind: types.MessageType = types.MessageType.Info) -> None:
        if not self.channel.closed:
            self.window_log_message(types.LogMessageParams(type=kind, message=text))

    def notify(self, method: str, params: Any) -> None:
        if not self.channel.closed:
            self.protocol.notify(method, params)

    async def call(self, method: str, params: Any, timeout: float | None = None) -> Any:
        return await self.protocol.call(method, params, timeout or self.options.client_timeout)

    # ----------------------------------------------------------------- teardown
    async def aclose(self) -> None:
        """End every turn (each persists its transcript), then close the sessions. Idempotent."""
        if self.closed:
            return
        self.closed = True
        await self.turns.aclose()
        await self.sessions.aclose()
