"""The embedded model's server kept loaded between runs (``local_keep_alive``, agent/local/keeper.py): real
processes and the real model. Each test has its own cache directory, so its servers are its own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.process_state import alive

from agentls.agent.local.keeper import read_registry

from .conftest import ROOT, needs_local_model

pytestmark = [*needs_local_model, pytest.mark.timeout(600)]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache of its own, with the installed model linked in; every server it registered is ended after."""
    from agentls.agent.local import model

    real = model.cache_dir()
    mine = tmp_path / "cache"
    (mine / "models").mkdir(parents=True)
    for f in real.iterdir():
        if f.is_file() and f.name.endswith((".gguf", ".verified.json")):
            (mine / "models" / f.name).symlink_to(f)
    monkeypatch.setenv("AGENTLS_CACHE_DIR", str(mine))
    yield mine / "models"
    for registry in (mine / "models" / "servers").glob("*.json"):
        try:
            os.kill(json.loads(registry.read_text())["pid"], signal.SIGTERM)
        except (OSError, ValueError, KeyError):
            pass


def run(workspace: Path, cache: Path, keep_alive: float, prompt: str = "What does greet.py print? One line.",
        ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENTLS_CACHE_DIR": str(cache.parent), "AGENTLS_LOCAL_KEEP_ALIVE": f"{keep_alive:g}",
           "AGENTLS_DATA_DIR": str(workspace.parent / "data")}
    return subprocess.run([sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--json", prompt],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=500)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "hello"
    ws.mkdir()
    (ws / "greet.py").write_text('print("Hello, world!")\n')
    return ws


def registered(cache: Path) -> list[dict[str, object]]:
    out = []
    for f in (cache / "servers").glob("*.json"):
        value = json.loads(f.read_text())
        if read_registry(f, str(value.get("model_id"))) is not None:
            out.append(value)
    return out


def test_the_second_run_uses_the_server_the_first_left_loaded(workspace: Path, cache: Path) -> None:
    first = run(workspace, cache, 120)
    assert first.returncode == 0, first.stderr[-2000:]
    servers = registered(cache)
    assert len(servers) == 1  # it outlived the run that started it
    pid = servers[0]["pid"]
    second = run(workspace, cache, 120)
    assert second.returncode == 0, second.stderr[-2000:]
    assert [s["pid"] for s in registered(cache)] == [pid]  # the same server: no second load
    assert "Hello" in json.loads(second.stdout)["final_response"]


def test_an_idle_server_exits_and_unregisters(workspace: Path, cache: Path) -> None:
    done = run(workspace, cache, 3)
    assert done.returncode == 0, done.stderr[-2000:]
    [server] = registered(cache)
    pid = int(str(server["pid"]))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not alive(pid):
            break
        time.sleep(0.5)
    else:
        pytest.fail("the kept server did not exit after its keep-alive")
    assert not list((cache / "servers").glob("*.json"))


def test_keep_alive_0_leaves_no_server_behind(workspace: Path, cache: Path) -> None:
    done = run(workspace, cache, 0)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (cache / "servers").exists() or not registered(cache)


def test_a_server_that_died_is_replaced(workspace: Path, cache: Path) -> None:
    first = run(workspace, cache, 120)
    assert first.returncode == 0, first.stderr[-2000:]
    [server] = registered(cache)
    os.kill(int(str(server["pid"])), signal.SIGKILL)  # no chance to unregister: the file stays, stale
    time.sleep(0.5)
    second = run(workspace, cache, 120)
    assert second.returncode == 0, second.stderr[-2000:]
    [again] = registered(cache)
    assert again["pid"] != server["pid"]


def test_two_runs_at_once_share_one_server(workspace: Path, cache: Path) -> None:
    env = {**os.environ, "AGENTLS_CACHE_DIR": str(cache.parent), "AGENTLS_LOCAL_KEEP_ALIVE": "120",
           "AGENTLS_DATA_DIR": str(workspace.parent / "data")}
    cmd = [sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--json", "Say hi."]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
             for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=500)
        assert p.returncode == 0, err[-2000:]
    assert len(registered(cache)) == 1 and len(list((cache / "servers").glob("*.json"))) == 1


def test_model_stop_ends_the_kept_server(workspace: Path, cache: Path) -> None:
    done = run(workspace, cache, 120)
    assert done.returncode == 0, done.stderr[-2000:]
    [server] = registered(cache)
    env = {**os.environ, "AGENTLS_CACHE_DIR": str(cache.parent)}
    stop = subprocess.run([sys.executable, "-m", "agentls.server", "model", "stop"], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=60)
    assert stop.returncode == 0 and "stopped 1 kept model server" in stop.stderr
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if not alive(int(str(server["pid"]))):
            return
        time.sleep(0.2)
    pytest.fail("agentls model stop did not end the server")
