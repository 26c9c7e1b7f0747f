"""``AgentServer``: the pygls ``LanguageServer`` with the face's state (client features, settings), and the
runtime's ``Face`` for its sessions (their settings, their ``LspHost``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from agentls.agent.config import Settings
from agentls.agent.version import __version__
from . import settings as lsp_settings
from .capabilities import ClientFeatures
from .documents import Documents, path_of
from .protocol import AgentProtocol
from .settings import LspOptions
from .status_line import status
from .wire import StdioChannel
from ..runtime.live import LiveSession
from ..runtime.notices import Notice, settings_notices
from ..runtime.registry import SessionRegistry

if TYPE_CHECKING:
    from agentls.agent.host import Host

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


HostFactory = Callable[["AgentServer", str, Path], "Host"]  # LspHost
CommandRunner = Callable[["AgentServer", Any], Awaitable[Any]]  # commands.execute


class AgentServer(LanguageServer):
    protocol: AgentProtocol

    def __init__(self, channel: StdioChannel, *, host: HostFactory, execute: CommandRunner) -> None:
        super().__init__("agentls", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=AgentProtocol)
        self.channel = channel
        self.protocol.set_writer(channel)
        self.features = ClientFeatures()
        self.options = LspOptions()
        self.root = Path.cwd().resolve()
        self.init_options: dict[str, Any] = {}
        self._mcp_servers: Any = None  # initializationOptions.mcpServers
        self.documents = Documents(lambda: self.workspace)
        self.inline: dict[Path, str] = {}  # workspace root -> its inline session (command-only clients)
        self.requests: set[asyncio.Task[Any]] = set()  # agent/* and executeCommand handlers running
        self._sessions: SessionRegistry | None = None
        self._host = host
        self._execute = execute
        self._reported: set[str] = set()
        self.closed = False

    @property
    def sessions(self) -> SessionRegistry:
        """The runtime's sessions, on the store the settings of the workspace root name."""
        if self._sessions is None:
            db = self.settings_for(self.root).session_db
            self._sessions = SessionRegistry(self, db_path=Path(db).expanduser() if db else None)
        return self._sessions

    @contextmanager
    def handling(self) -> Iterator[None]:
        """Count the running request handler in ``requests``."""
        task = asyncio.current_task()
        if task is not None:
            self.requests.add(task)
        try:
            yield
        finally:
            if task is not None:
                self.requests.discard(task)

    def host_for(self, session: LiveSession) -> Host:
        return self._host(self, session.session_id, session.cwd)

    def mcp_servers(self) -> Any:
        """``initializationOptions.mcpServers``: MCP servers for every session (docs/mcp.md)."""
        return self._mcp_servers

    async def execute_command(self, params: Any) -> Any:
        """``workspace/executeCommand`` (``commands.py``)."""
        return await self._execute(self, params)

    # ----------------------------------------------------------------- setup
    def configure(self, params: dict[str, Any]) -> None:
        self.features = ClientFeatures.parse(params.get("capabilities"))
        self.root = workspace_root(params)
        core, self.options, problems = lsp_settings.split_options(params.get("initializationOptions"))
        self._mcp_servers = core.pop("mcpServers", None)
        self.init_options = core
        for problem in problems:
            self.report_config(problem)
        self.settings_for(self.root)
        log.info("initialized: root %s, client features %s", self.root, self.features)

    def settings_for(self, cwd: Path) -> Settings:
        settings, problems = lsp_settings.load(cwd, self.init_options)
        for problem in problems:
            self.report_config(problem)
        self.show_notices(settings_notices(settings))  # e.g. what a workspace file may not set
        return settings

    def show_notices(self, notices: list[Notice]) -> None:
        for notice in notices:
            level = types.MessageType.Warning if notice.level == "warning" else types.MessageType.Info
            self.report_config(notice.text, level)

    def report_config(self, problem: str, kind: types.MessageType = types.MessageType.Error) -> None:
        """A configuration problem or notice, shown once: the server goes on (with the default for a bad
        setting)."""
        if problem in self._reported:
            return
        self._reported.add(problem)
        log.warning("configuration: %s", problem)
        self.show(kind, f"agentls: {problem}")

    # ----------------------------------------------------------------- messages to the user
    def show(self, kind: types.MessageType, text: str, *, log: bool = False) -> None:
        """One status line (``status_line.py``); the whole text also goes to the log when it was cut, or
        when ``log`` asks for it."""
        if self.channel.closed:
            return
        line, cut = status(text)
        self.window_show_message(types.ShowMessageParams(type=kind, message=line))
        if cut or log:
            self.log(text, kind)

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
        if self._sessions is not None:
            await self._sessions.aclose()
