"""initialize: the advertised capabilities, settings from every layer, bad settings, no model at all."""

from __future__ import annotations

import math
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig

from agentls.agent.scripted import ScriptedServer, text
from agentls.server.lsp.capabilities import COMMANDS, METHODS, UPDATE_KINDS

from .conftest import DATA_DIR, SERVER_ENV, finish, initialize, new_session, request, until
from .editor import Editor, make_editor


async def test_capabilities_are_the_contract(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    result = await initialize(editor, srv, workspace)
    caps = result.capabilities
    assert caps.experimental == {"agent": {"version": 1, "methods": list(METHODS), "updateKinds": list(UPDATE_KINDS)}}
    assert set(METHODS) == {"agent/newSession", "agent/turn", "agent/steer", "agent/interrupt", "agent/compress",
                            "agent/listSessions", "agent/loadSession", "agent/undo", "agent/listMcpServers",
                            "agent/forkSession", "agent/rewind", "agent/setMode", "agent/deleteSession",
                            "agent/listCommands"}
    sync = caps.text_document_sync
    assert isinstance(sync, types.TextDocumentSyncOptions)
    assert sync.change == types.TextDocumentSyncKind.Incremental and sync.open_close
    assert caps.execute_command_provider is not None
    assert set(caps.execute_command_provider.commands) == set(COMMANDS)
    assert {"agent.turn", "agent.steer", "agent.interrupt", "agent.compress", "agent.newSession"} <= set(COMMANDS)
    assert isinstance(caps.code_action_provider, types.CodeActionOptions)
    assert caps.position_encoding == types.PositionEncodingKind.Utf16
    assert result.server_info is not None and result.server_info.name == "agentls"


async def test_init_options_outrank_the_workspace_file(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    (workspace / ".agentls.toml").write_text('model = "from-file"\nmax_iterations = 7\n')
    await initialize(editor, srv, workspace, options={"model": "from-init"})
    sid = await new_session(editor)
    srv.push(text("ok"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "hi"})
    assert srv.requests[-1].model == "from-init"


async def test_a_bad_option_is_reported_and_the_rest_still_applies(editor: Editor, srv: ScriptedServer,
                                                                   workspace: Path) -> None:
    await initialize(editor, srv, workspace, options={"maxIterations": "many", "approval": "sometimes"})
    await until(lambda: len(editor.messages) >= 2, what="two error messages")
    errors = [m.message for m in editor.messages if m.type == types.MessageType.Error]
    assert any("maxIterations" in m and "initializationOptions" in m for m in errors), errors
    assert any("approval" in m and "initializationOptions" in m for m in errors), errors
    sid = await new_session(editor)
    srv.push(text("still works"))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "hi"})
    assert result["finalResponse"] == "still works"
    assert srv.requests[-1].model == "scripted"  # the good options were kept


async def test_a_broken_workspace_file_is_reported_not_fatal(editor: Editor, srv: ScriptedServer,
                                                            workspace: Path) -> None:
    (workspace / ".agentls.toml").write_text("model = [unclosed\n")
    await initialize(editor, srv, workspace)
    await until(lambda: editor.messages, what="an error message")
    assert ".agentls.toml" in editor.messages[0].message
    sid = await new_session(editor)
    srv.push(text("fine"))
    assert (await request(editor, "agent/turn", {"sessionId": sid, "prompt": "hi"}))["finalResponse"] == "fine"


async def test_bad_lsp_options_are_reported(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, options={"clientTimeout": -3})
    await until(lambda: editor.messages, what="an error message")
    assert "clientTimeout" in editor.messages[0].message


async def test_bad_numbers_are_reported_and_the_server_goes_on(editor: Editor, srv: ScriptedServer,
                                                              workspace: Path) -> None:
    """NaN, infinity, a 400-digit integer and negatives, from the init options and the workspace file: the
    server answers initialize, shows each problem (key, source, default) and runs turns on the defaults."""
    (workspace / ".agentls.toml").write_text(f"terminalTimeout = {'9' * 400}\nmaxRetries = -5\n")
    bad = {"requestTimeout": 10 ** 400, "temperature": math.nan, "maxTokens": -1, "contextWindow": math.inf,
           "toolOutputLimit": -(10 ** 400), "clientTimeout": 10 ** 400, "permissionTimeout": math.nan}
    result = await initialize(editor, srv, workspace, options=bad)
    assert result.server_info is not None
    keys = [*bad, "terminalTimeout", "maxRetries"]
    await until(lambda: len(editor.messages) >= len(keys), what="one message per bad setting")
    errors = [m.message for m in editor.messages if m.type == types.MessageType.Error]
    def whole_texts() -> list[str]:  # a status line cut short says "(more in the log)": the log has it whole
        return [m for m in errors if "(more in the log)" not in m] + [m.message for m in editor.log_messages]

    await until(lambda: all(any(f"{k!r}" in m for m in whole_texts()) for k in keys), what="each whole text")
    logged = whole_texts()
    for key in keys:
        [message] = [m for m in errors if f"{key!r}" in m]  # the status line: one short line
        assert "\n" not in message and "9" * 50 not in message, message
        assert ("initializationOptions" in message) == (key in bad), message
        whole = next(m for m in logged if f"{key!r}" in m)  # the whole text, with the default
        assert "(default: " in whole and "9" * 50 not in whole, whole
    sid = await new_session(editor)
    srv.push(text("still works"))
    assert (await request(editor, "agent/turn", {"sessionId": sid, "prompt": "hi"}))["finalResponse"] == "still works"
    sent = srv.requests[-1].body
    assert "temperature" not in sent and "max_tokens" not in sent and "max_completion_tokens" not in sent


# A server whose core cannot find the local model either: nothing to talk to at all.
HIDE_LOCAL = ("import importlib.util as u, sys; real = u.find_spec; "
              "u.find_spec = lambda n, p=None: None if n.startswith('xllamacpp') else real(n, p); "
              "from agentls.server.lsp import main; sys.exit(main([]))")


MODELLESS_USER_CONFIG = DATA_DIR / "modelless-user-config.toml"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-c", HIDE_LOCAL],
                                              client_factory=make_editor,
                                              server_env={**{k: v for k, v in SERVER_ENV.items()
                                                             if k != "AGENTLS_API_KEY"},
                                                          "AGENTLS_CONFIG": str(MODELLESS_USER_CONFIG)}))
async def modelless(lsp_client: Editor) -> AsyncIterator[None]:
    yield
    await finish(lsp_client)


async def test_without_a_model_the_server_starts_and_a_turn_explains(modelless: Editor, workspace: Path) -> None:
    await modelless.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=workspace.as_uri()))
    sid = await new_session(modelless)
    with pytest.raises(JsonRpcException) as info:
        await request(modelless, "agent/turn", {"sessionId": sid, "prompt": "hi"})
    assert info.value.code == -32603
    message = info.value.message
    assert "Two ways forward" in message and "AGENTLS_API_KEY" in message and "agentls[local]" in message
    # Fixing the configuration takes effect without a restart.
    async with ScriptedServer() as srv:
        MODELLESS_USER_CONFIG.write_text(f'model = "scripted"\nbase_url = "{srv.openai_url}"\n')
        try:
            srv.push(text("now there is a model"))
            result = await request(modelless, "agent/turn", {"sessionId": sid, "prompt": "hi"})
            assert result["finalResponse"] == "now there is a model"
        finally:
            MODELLESS_USER_CONFIG.unlink()


async def test_what_a_workspace_file_may_not_set_is_reported(editor: Editor, srv: ScriptedServer,
                                                             workspace: Path) -> None:
    (workspace / ".agentls.toml").write_text('base_url = "https://elsewhere.example/v1"\n')
    await initialize(editor, srv, workspace)
    await until(lambda: editor.messages, what="a warning")
    [warning] = editor.messages
    assert warning.type == types.MessageType.Warning and "base_url" in warning.message
    sid = await new_session(editor)
    srv.push(text("the init options' URL was used"))
    assert (await request(editor, "agent/turn", {"sessionId": sid, "prompt": "hi"}))["completed"]


async def test_agentls_log_file_names_the_log(workspace: Path, tmp_path: Path) -> None:
    """``AGENTLS_LOG_FILE`` works for ``agentls lsp`` as it does for ``agentls acp``: the log goes there."""
    import asyncio
    import json

    from .conftest import SERVER_COMMAND

    log = tmp_path / "agentls-lsp.log"
    env = {**SERVER_ENV, "AGENTLS_LOG_FILE": str(log), "AGENTLS_LOG_LEVEL": "INFO"}
    proc = await asyncio.create_subprocess_exec(*SERVER_COMMAND, stdin=asyncio.subprocess.PIPE,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                env=env)
    frames = b""
    for message in ({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": workspace.as_uri(),
                                                                 "capabilities": {}}},
                    {"id": 2, "method": "shutdown"}, {"method": "exit"}):
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        frames += b"Content-Length: %d\r\n\r\n" % len(body) + body
    _, err = await asyncio.wait_for(proc.communicate(frames), 30)
    assert proc.returncode == 0
    assert f"initialized: root {workspace}" in log.read_text()
    assert b"initialized" not in err  # the file, not stderr
