"""End-to-end fixtures: the real ``agentls lsp`` process, a fake editor (pytest-lsp), the scripted model."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import tomllib
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentls.agent.scripted import ScriptedServer

from .editor import Editor, make_editor

DATA_DIR = Path(os.environ.get("AGENTLS_DATA_DIR") or tempfile.mkdtemp(prefix="agentls-lsp-tests-"))
SERVER_ENV = {**os.environ, "AGENTLS_DATA_DIR": str(DATA_DIR), "AGENTLS_API_KEY": "scripted-key",
              "AGENTLS_CONFIG": str(DATA_DIR / "no-user-config.toml")}
for _name in ("AGENTLS_MODEL", "AGENTLS_BASE_URL", "AGENTLS_PROVIDER", "AGENTLS_APPROVAL", "OPENAI_API_KEY"):
    SERVER_ENV.pop(_name, None)
SERVER_COMMAND = [sys.executable, "-m", "agentls.server", "lsp"]
DB_PATH = DATA_DIR / "sessions.db"

# Helix 25.01's declared capabilities, as far as the server looks at them (helix-lsp/src/client.rs):
# applyEdit with documentChanges and resource operations, progress, no window.showMessage (so no
# showMessageRequest), no experimental capabilities.
HELIX_CAPABILITIES: dict[str, Any] = {
    "workspace": {"configuration": True, "applyEdit": True, "executeCommand": {"dynamicRegistration": False},
                  "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create", "rename", "delete"],
                                    "failureHandling": "abort", "normalizesLineEndings": False},
                  "workspaceFolders": True},
    "textDocument": {"codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
        "", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite", "source",
        "source.organizeImports"]}}, "isPreferredSupport": True, "disabledSupport": True, "dataSupport": True,
        "resolveSupport": {"properties": ["edit", "command"]}},
        "synchronization": {"didSave": True, "willSave": False}},
    "window": {"workDoneProgress": True},
    "general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
}
FULL_AGENT = {"terminal": True, "permissions": True, "updates": True}
HELIX_LANGUAGES = ROOT / "editors" / "helix" / "languages.toml"


def helix_config() -> dict[str, Any]:
    """The ``config`` table of editors/helix/languages.toml: what Helix sends as initializationOptions."""
    with HELIX_LANGUAGES.open("rb") as fh:
        config: dict[str, Any] = tomllib.load(fh)["language-server"]["agentls"]["config"]
    return config


def _capture(name: str) -> dict[str, Any]:
    for resource in resources.files("pytest_lsp.clients").iterdir():
        if resource.name.startswith(name) and resource.name.endswith(".json"):
            data: dict[str, Any] = json.loads(resource.read_text())
            return dict(data["capabilities"])
    raise LookupError(name)


def capabilities(profile: str, agent: dict[str, Any] | None) -> types.ClientCapabilities:
    """VS Code or Neovim (pytest-lsp's captures), Helix, or "bare" (no capabilities at all), with
    ``experimental.agent`` when given."""
    raw = {"vscode": lambda: _capture("visual_studio_code_v1.65.2"), "neovim": lambda: _capture("neovim_v0.11.0"),
           "helix": lambda: json.loads(json.dumps(HELIX_CAPABILITIES)), "bare": dict}[profile]()
    if agent is not None:
        raw.setdefault("experimental", {})["agent"] = agent
    caps: types.ClientCapabilities = get_converter().structure(raw, types.ClientCapabilities)
    return caps


async def finish(client: Editor) -> None:
    """Shut the server down properly; if that fails, close its stdin (it exits on end of input), then kill.
    (pytest-lsp's own teardown only waits for the process to exit.)"""
    server = client._server
    if server is None or server.returncode is not None:
        return
    try:
        if client.capabilities is not None and client.error is None:
            await asyncio.wait_for(client.shutdown_session(), 20)
            return
    except Exception:  # the test's own failure is what matters; just end the process
        pass
    if server.stdin is not None and not server.stdin.is_closing():
        server.stdin.close()
    try:
        await asyncio.wait_for(server.wait(), 20)
    except TimeoutError:
        server.kill()
        await server.wait()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_editor,
                                              server_env=SERVER_ENV))
async def editor(lsp_client: Editor) -> AsyncIterator[None]:
    yield
    await finish(lsp_client)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_editor,
                                              server_env=SERVER_ENV))
async def other_editor(lsp_client: Editor) -> AsyncIterator[None]:
    """A second editor with its own server process (same session store)."""
    yield
    await finish(lsp_client)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    (ws / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n\n\nprint(greet('world'))\n")
    (ws / "notes.md").write_text("# Notes\n\n- one\n- two\n")
    return ws


async def initialize(editor: Editor, srv: ScriptedServer, workspace: Path, *, profile: str = "vscode",
                     agent: dict[str, Any] | None = FULL_AGENT, options: dict[str, Any] | None = None,
                     init_options: Any = ...) -> types.InitializeResult:
    opts = {"model": "scripted", "baseUrl": srv.openai_url, "titles": "prompt", "approval": "yolo",
            "maxRetries": 0, **(options or {})}
    result: types.InitializeResult = await editor.initialize_session(types.InitializeParams(
        capabilities=capabilities(profile, agent), root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        initialization_options=opts if init_options is ... else init_options))
    return result


async def request(editor: Editor, method: str, params: Any, timeout: float = 30) -> Any:
    return await asyncio.wait_for(editor.protocol.send_request_async(method, params), timeout)


async def new_session(editor: Editor, **params: Any) -> str:
    result = await request(editor, "agent/newSession", params)
    session_id: str = result["sessionId"]
    return session_id


async def until(predicate: Any, timeout: float = 10.0, what: str = "condition") -> None:
    """Wait until ``predicate()`` is true (polling the event loop)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def update_kinds(editor: Editor, session_id: str | None = None) -> list[str]:
    return [u["update"]["sessionUpdate"] for u in editor.seen.updates
            if session_id is None or u["sessionId"] == session_id]


def streamed_text(editor: Editor, session_id: str) -> str:
    """The agent_message_chunk texts of a session, joined."""
    return "".join(u["update"]["content"]["text"] for u in editor.seen.updates
                   if u["sessionId"] == session_id and u["update"]["sessionUpdate"] == "agent_message_chunk")
