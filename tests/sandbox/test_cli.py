"""Through ``agentls run`` (a real subprocess against the scripted provider): the sandbox is on by default,
a denied command cannot be re-run outside (nobody can be asked), ``--sandbox off`` and
``--sandbox-network on`` loosen it, and the notice when no mechanism works is said once, on stderr."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from agentls.agent.sandbox import detect as detect_module
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import Loopback, mechanism_or_skip

SCRIPT = Path(sys.executable).parent / "agentls"
AGENTLS = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "agentls.server"]
ROOT = Path(__file__).resolve().parents[2]


async def agentls_run(srv: ScriptedServer, workspace: Path, tmp_path: Path, *args: str,
                      env: dict[str, str] | None = None) -> tuple[int, str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLS_") and not k.endswith("_API_KEY")}
    base.update(AGENTLS_DATA_DIR=str(tmp_path / "data"), AGENTLS_CONFIG=str(tmp_path / "no-user-config.toml"),
                PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), **(env or {}))
    proc = await asyncio.create_subprocess_exec(
        *AGENTLS, "run", "-w", str(workspace), "--base-url", srv.openai_url, "-m", "m", "--approval", "yolo",
        "--no-persist", *args, "do it", env=base, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def tool_results(srv: ScriptedServer) -> list[str]:
    return [str(m["content"]) for m in srv.requests[-1].messages if m["role"] == "tool"]


@pytest.fixture
async def mechanism(monkeypatch: pytest.MonkeyPatch) -> str:
    """The mechanism the agentls process will find here (the first that works)."""
    found = await detect_module.detect()
    if found.mechanism is None:
        await mechanism_or_skip("bubblewrap", monkeypatch)
    assert found.mechanism is not None
    return found.mechanism


async def test_a_write_outside_is_denied_and_not_rerun(srv: ScriptedServer, workspace: Path, outside: Path,
                                                       tmp_path: Path, mechanism: str) -> None:
    srv.push(tools(call("terminal", {"command": f"echo $AGENTLS_SANDBOXED; echo changed > {outside}/precious.txt"}),
                   call("terminal", {"command": "echo inside > made.txt"})), text("done"))
    code, out, err = await agentls_run(srv, workspace, tmp_path)
    assert code == 0, err
    assert (outside / "precious.txt").read_text() == "original\n" and (workspace / "made.txt").exists()
    denied, inside = tool_results(srv)
    assert f"the sandbox ({mechanism}) denied a write outside the workspace" in denied
    assert "cannot ask; it was not run again" in denied and mechanism in denied and "exit code 0" in inside


async def test_sandbox_off_loosens_it(srv: ScriptedServer, workspace: Path, outside: Path, tmp_path: Path,
                                      mechanism: str) -> None:
    srv.push(tools(call("terminal", {"command": f"echo changed > {outside}/precious.txt"})), text("done"))
    code, _, err = await agentls_run(srv, workspace, tmp_path, "--sandbox", "off")
    assert code == 0, err
    assert (outside / "precious.txt").read_text() == "changed\n"


async def test_network_off_then_on(srv: ScriptedServer, workspace: Path, tmp_path: Path, loopback: Loopback,
                                   mechanism: str) -> None:
    srv.push(tools(call("terminal", {"command": loopback.connect_command()})), text("done"))
    assert (await agentls_run(srv, workspace, tmp_path))[0] == 0
    assert loopback.connections == 0 and "denied network access" in tool_results(srv)[0]
    srv.push(tools(call("terminal", {"command": loopback.connect_command()})), text("done"))
    assert (await agentls_run(srv, workspace, tmp_path, "--sandbox-network", "on"))[0] == 0
    assert loopback.connections == 1 and "pong" in tool_results(srv)[0]


async def test_without_a_mechanism_the_notice_is_said_once(srv: ScriptedServer, workspace: Path,
                                                          tmp_path: Path) -> None:
    none = {detect_module.ONLY_ENV: "none"}
    srv.push(tools(call("terminal", {"command": "echo one"}), call("terminal", {"command": "echo two"})),
             text("done"))
    code, _, err = await agentls_run(srv, workspace, tmp_path, "--quiet", env=none)
    assert code == 0 and err.count("no sandbox is available here") == 1, err
    assert all("exit code 0" in r for r in tool_results(srv))
    srv.push(tools(call("terminal", {"command": "touch ran.txt"})), text("done"))
    code, _, err = await agentls_run(srv, workspace, tmp_path, "--sandbox", "strict", env=none)
    assert code == 0 and not (workspace / "ran.txt").exists()
    assert tool_results(srv)[0].startswith("error: the sandbox setting is 'strict'")


async def test_agentls_sandbox_reports_the_status(tmp_path: Path, workspace: Path, mechanism: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLS_")}
    env["AGENTLS_CONFIG"] = str(tmp_path / "none.toml")
    (workspace / ".agentls.toml").write_text('sandbox = "off"\n')  # loosening: ignored, with a warning
    proc = await asyncio.create_subprocess_exec(*AGENTLS, "sandbox", "-w", str(workspace), env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0
    assert out.decode().splitlines()[:2] == ["sandbox: auto (network off)", f"mechanism: {mechanism} (" +
                                             out.decode().splitlines()[1].split(" (", 1)[1]]
    assert "never loosen" in err.decode()
    protected = next(line for line in out.decode().splitlines() if line.startswith("read-only inside"))
    assert str(tmp_path / "none.toml") not in protected  # it does not exist
    assert str(Path(sys.prefix).resolve()) in protected and str(ROOT / "agent") in protected
