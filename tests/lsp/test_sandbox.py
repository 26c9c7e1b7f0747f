"""The OS sandbox through the LSP face: in-server commands run confined; a denied command asks through
``agent/requestPermission`` whether to run it again outside (a refusal runs nothing more); ``strict`` keeps
commands out of the editor's terminal; without a mechanism, ``window/showMessage`` says so once."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from agentls.agent.sandbox.detect import ONLY_ENV, detect
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import SERVER_COMMAND, SERVER_ENV, finish, initialize, new_session, request
from .editor import Editor, make_editor

NO_TERMINAL = {"permissions": True, "updates": True}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_editor,
                                              server_env={**SERVER_ENV, ONLY_ENV: "none"}))
async def bare_editor(lsp_client: Editor) -> AsyncIterator[None]:
    """An editor whose server finds no sandbox mechanism (limited by AGENTLS_SANDBOX_MECHANISMS)."""
    yield
    await finish(lsp_client)


@pytest.fixture
async def mechanism() -> str:
    found = await detect()
    if found.mechanism is None:
        pytest.skip(f"no sandbox mechanism works here: {found.detail}")
    return found.mechanism


@pytest.fixture
def outside() -> Iterator[Path]:
    """A file outside the workspace and outside /tmp (Landlock leaves /tmp writable)."""
    home = Path.home().resolve()
    if str(home).startswith("/tmp/"):
        pytest.skip("no directory outside /tmp")
    path = Path(tempfile.mkdtemp(prefix=".agentls-lsp-sandbox-", dir=home))
    (path / "precious.txt").write_text("original\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def tool_results(srv: ScriptedServer) -> list[str]:
    return [str(m["content"]) for m in srv.requests[-1].messages if m["role"] == "tool"]


async def turn(editor: Editor, srv: ScriptedServer, *commands: str) -> list[str]:
    sid = await new_session(editor)
    srv.push(tools(*[call("terminal", {"command": c}) for c in commands]), text("finished"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "run it"})
    return tool_results(srv)


async def test_a_denied_command_asks_and_a_refusal_runs_nothing(editor: Editor, srv: ScriptedServer, workspace: Path,
                                                                outside: Path, mechanism: str) -> None:
    await initialize(editor, srv, workspace, agent=NO_TERMINAL)
    editor.permission_answer = "reject_once"
    (out,) = await turn(editor, srv, f"touch {outside}/precious.txt")
    assert (outside / "precious.txt").read_text() == "original\n"
    (asked,) = editor.seen.permissions  # yolo: only leaving the sandbox asks
    assert asked["toolCall"]["kind"] == "execute" and "outside the sandbox" in asked["toolCall"]["title"]
    # "program": what an "always" answer would cover, the program by its real path (docs/sandbox.md)
    assert asked["toolCall"]["rawInput"]["sandbox"] == {
        "mechanism": mechanism, "denied": "write", "evidence": asked["toolCall"]["rawInput"]["sandbox"]["evidence"],
        "program": os.path.realpath(shutil.which("touch") or "")}
    assert [o["kind"] for o in asked["options"]] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert f"the sandbox ({mechanism}) denied a write" in out and "declined" in out


async def test_allowing_it_runs_it_again_outside(editor: Editor, srv: ScriptedServer, workspace: Path, outside: Path,
                                                 mechanism: str) -> None:
    await initialize(editor, srv, workspace, agent=NO_TERMINAL)
    editor.permission_answer = "allow_once"
    (out,) = await turn(editor, srv, f"echo changed > {outside}/precious.txt")
    assert (outside / "precious.txt").read_text() == "changed\n" and "exit code 0" in out


async def test_strict_keeps_commands_out_of_the_editors_terminal(editor: Editor, srv: ScriptedServer,
                                                                 workspace: Path, mechanism: str) -> None:
    await initialize(editor, srv, workspace, options={"sandbox": "strict"})  # the editor declared terminals
    (out,) = await turn(editor, srv, "echo sandbox=$AGENTLS_SANDBOXED")
    assert editor.seen.terminal == [] and f"sandbox={mechanism}" in out


async def test_in_auto_the_editors_terminal_runs_it_unconfined(editor: Editor, srv: ScriptedServer,
                                                               workspace: Path, mechanism: str) -> None:
    await initialize(editor, srv, workspace)
    (out,) = await turn(editor, srv, "echo sandbox=$AGENTLS_SANDBOXED")
    assert [m for m, _ in editor.seen.terminal][0] == "create" and "sandbox=\n" in out


async def test_without_a_mechanism_show_message_says_so_once(bare_editor: Editor, srv: ScriptedServer,
                                                             workspace: Path) -> None:
    await initialize(bare_editor, srv, workspace, agent=NO_TERMINAL)
    outs = await turn(bare_editor, srv, "echo one", "echo two")
    assert all("exit code 0" in o for o in outs)
    warnings = [m.message for m in bare_editor.messages if m.type == types.MessageType.Warning]
    assert sum("no sandbox is available here" in w for w in warnings) == 1, warnings
    notices = [u["update"] for u in bare_editor.seen.updates
               if "sandbox" in u["update"].get("_meta", {}).get("agentls", {})]
    assert len(notices) == 1 and notices[0]["sessionUpdate"] == "session_info_update"
    assert notices[0]["_meta"]["agentls"]["sandbox"]["mechanism"] is None


async def test_without_a_mechanism_strict_refuses(bare_editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(bare_editor, srv, workspace, options={"sandbox": "strict"})
    (out,) = await turn(bare_editor, srv, "touch ran.txt")
    assert out.startswith("error: the sandbox setting is 'strict'") and not (workspace / "ran.txt").exists()
    assert bare_editor.seen.terminal == []
