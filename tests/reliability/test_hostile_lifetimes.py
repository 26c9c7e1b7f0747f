"""Nothing agentls starts outlives it, whatever ends it: MCP servers (one that starts a ``setsid`` helper,
one that ignores SIGTERM, SIGINT, SIGHUP and the end of its input) through ``agentls run``, ``agentls lsp``
and ``agentls acp``, on a normal end, SIGTERM to the process group, SIGHUP, two Ctrl-C, end of input and
SIGKILL of agentls; and the local model's server (the real ``agentls.agent.local.serve`` over a stand-in
xllamacpp, tests/reliability/standin) killed while it loads and while it generates."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from tests.process_state import alive

from agentls.agent.scripted import ScriptedServer, stall, text

from .wire import AcpProc, LspProc, server_env

HERE = Path(__file__).resolve().parent
SERVER = HERE / "mcp_hostile_server.py"
STANDIN = HERE / "standin"


async def pid_in(path: Path, timeout: float = 30) -> int:
    with anyio.fail_after(timeout):
        while not (path.exists() and path.read_text().strip()):
            await asyncio.sleep(0.02)
    return int(path.read_text())


async def all_gone(pids: list[int], timeout: float = 10) -> list[int]:
    with contextlib.suppress(TimeoutError):
        with anyio.fail_after(timeout):
            while any(alive(p) for p in pids):
                await asyncio.sleep(0.05)
    return [p for p in pids if alive(p)]


def cleanup(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def config(home: Path, state: Path, *flags: str) -> None:
    args = json.dumps([str(SERVER), str(state), *flags])
    (home / "no-config.toml").write_text(f'[mcp_servers.h]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\n')


async def run(home: Path, workspace: Path, srv: ScriptedServer, *args: str,
              env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    """``agentls run`` in a process group of its own (as a CI step or a terminal job is)."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--base-url", srv.openai_url,
        "--model", "scripted", "--no-persist", *args, env=env or server_env(home), start_new_session=True,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


# -- MCP servers through agentls run ---------------------------------------------------------------

@pytest.mark.parametrize("stubborn", [False, True], ids=["polite", "stubborn"])
async def test_a_normal_end_of_run_ends_the_server_and_its_setsid_child(stubborn: bool, srv: ScriptedServer,
                                                                        workspace: Path, home: Path) -> None:
    state = home / "state"
    config(home, state, "--setsid-child", *(["--stubborn"] if stubborn else []))
    srv.push(text("done"))
    proc = await run(home, workspace, srv, "hi")
    pids = []
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err
        pids = [await pid_in(state / "server.pid"), await pid_in(state / "child.pid")]
        assert await all_gone(pids, 2) == [], "the MCP server or its setsid child outlived agentls run"
    finally:
        cleanup(pids)


@pytest.mark.parametrize("how", ["sigterm-group", "sighup", "two-ctrl-c", "sigkill"])
async def test_a_stopped_run_ends_a_server_that_ignores_everything(how: str, srv: ScriptedServer,
                                                                   workspace: Path, home: Path) -> None:
    state = home / "state"
    config(home, state, "--setsid-child", "--stubborn")
    srv.push(stall(120, content="never"))
    proc = await run(home, workspace, srv, "hi")
    pids = []
    try:
        pids = [await pid_in(state / "server.pid"), await pid_in(state / "child.pid")]
        with anyio.fail_after(30):
            while not srv.requests:  # the turn is waiting on the model: the server is up and in use
                await asyncio.sleep(0.02)
        if how == "sigterm-group":
            os.killpg(proc.pid, signal.SIGTERM)
        elif how == "sighup":
            proc.send_signal(signal.SIGHUP)
        elif how == "two-ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)
            await asyncio.sleep(0.3)
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.kill()
            pids = pids[:1]  # its setsid child was re-parented to init: out of reach (docs/reliability.md)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
        assert await all_gone(pids, 5) == [], f"outlived agentls run ({how}): {pids} {err.decode()[-3000:]}"
    finally:
        cleanup(pids)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


# -- MCP servers through the editor faces ----------------------------------------------------------

@pytest.mark.parametrize("how", ["shutdown", "end-of-input", "sigterm"])
async def test_the_lsp_face_ends_its_mcp_servers(how: str, srv: ScriptedServer, workspace: Path, home: Path) -> None:
    state = home / "state"
    config(home, state, "--setsid-child", "--stubborn")
    lsp = await LspProc.start(server_env(home), workspace, stderr=home / "stderr.log")
    pids = []
    try:
        await lsp.initialize(workspace, {"model": "scripted", "baseUrl": srv.openai_url, "sandbox": "off"})
        await lsp.new_session()
        pids = [await pid_in(state / "server.pid"), await pid_in(state / "child.pid")]
        if how == "shutdown":
            assert await lsp.shutdown() == 0
        elif how == "end-of-input":
            lsp.close_stdin()
            await lsp.wait(30)
        else:
            lsp.proc.send_signal(signal.SIGTERM)
            await lsp.wait(30)
        assert await all_gone(pids, 2) == [], f"outlived agentls lsp ({how})"
    finally:
        cleanup(pids)
        await lsp.aclose()


@pytest.mark.parametrize("how", ["end-of-input", "sigterm", "sighup"])
async def test_the_acp_face_ends_its_mcp_servers(how: str, workspace: Path, home: Path) -> None:
    state = home / "state"
    config(home, state, "--setsid-child", "--stubborn")
    acp = await AcpProc.start(server_env(home), workspace, stderr=home / "stderr.log")
    pids = []
    try:
        await acp.initialize()
        await acp.new_session(workspace)
        pids = [await pid_in(state / "server.pid"), await pid_in(state / "child.pid")]
        if how == "end-of-input":
            acp.close_stdin()
        else:
            acp.proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGHUP)
        await acp.wait(30)
        assert await all_gone(pids, 2) == [], f"outlived agentls acp ({how})"
    finally:
        cleanup(pids)
        await acp.aclose()


# -- the local model's server ----------------------------------------------------------------------

def standin_env(home: Path, load_seconds: float) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(STANDIN), os.environ.get("PYTHONPATH")) if p)
    # local_keep_alive 0: the server's lifetime tied to the run's, which these cases are about (a server kept
    # loaded between runs outlives the run by design: tests/local/test_keep_alive.py)
    return server_env(home, PYTHONPATH=path, STANDIN_PID_FILE=str(home / "model.pid"),
                      STANDIN_LOAD_SECONDS=str(load_seconds), AGENTLS_LOCAL_KEEP_ALIVE="0")


@pytest.mark.parametrize("when", ["loading", "generating"])
@pytest.mark.parametrize("how", ["sigterm-group", "sighup", "sigkill"])
async def test_the_model_server_ends_with_a_killed_run(how: str, when: str, workspace: Path, home: Path) -> None:
    model = home / "tiny.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 64)
    env = standin_env(home, 60 if when == "loading" else 0)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--model", f"local:{model}",
        "--no-persist", "-q", "hi", env=env, start_new_session=True, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    pids = []
    try:
        pids = [await pid_in(home / "model.pid", 60)]
        if when == "generating":  # the stand-in answered /health: the turn's completion request is pending
            log = next(iter((home / "cache").rglob("llama-server.log")), home / "none")
            with anyio.fail_after(60):
                while not (log.exists() and b"serving" in log.read_bytes()):
                    await asyncio.sleep(0.05)
                    log = next(iter((home / "cache").rglob("llama-server.log")), log)
            await asyncio.sleep(0.5)
        if how == "sigterm-group":
            os.killpg(proc.pid, signal.SIGTERM)
        elif how == "sighup":
            proc.send_signal(signal.SIGHUP)
        else:
            proc.kill()
        await asyncio.wait_for(proc.communicate(), 30)
        assert await all_gone(pids, 5) == [], f"the model server outlived agentls run ({how}, {when})"
    finally:
        cleanup(pids)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
