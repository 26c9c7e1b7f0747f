"""Fixtures for the sandbox suite: a workspace under /tmp, a directory outside it (and outside /tmp,
which Landlock leaves writable), and each mechanism that works on this machine.

A mechanism that cannot work here is skipped with the reason; as root (on CI and on the development
machines), bubblewrap must work (scripts/test installs it), so there its absence fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent_pool import AgentPool

from agentls.agent.agent import AIAgent
from agentls.agent.disk_host import DiskHost
from agentls.agent.host import CommandResult, CommandSpec
from agentls.agent.process import run_process
from agentls.agent.sandbox import detect as detect_module
from agentls.agent.sandbox.landlock import abi_version
from agentls.agent.sandbox.policy import BUBBLEWRAP, LANDLOCK, Confinement

from agentls.agent.scripted import ScriptedServer

MECHANISMS = [BUBBLEWRAP, LANDLOCK]
Factory = Callable[..., AIAgent]


def landlock_support() -> str:
    """Why this kernel has no Landlock ("" when it has)."""
    if abi_version() >= 1:
        return ""
    try:
        lsm = Path("/sys/kernel/security/lsm").read_text().strip()
    except OSError as exc:
        lsm = f"unreadable ({exc.strerror})"
    return f"the kernel has no Landlock: landlock_create_ruleset gives no ABI; /sys/kernel/security/lsm: {lsm}"


async def mechanism_or_skip(mechanism: str, monkeypatch: pytest.MonkeyPatch) -> Confinement:
    """A confinement of ``mechanism`` as detection finds it here (the real probe), or a skip saying why."""
    monkeypatch.setenv(detect_module.ONLY_ENV, mechanism)
    found = await detect_module.detect()
    monkeypatch.delenv(detect_module.ONLY_ENV)
    if found.mechanism != mechanism:
        reason = landlock_support() if mechanism == LANDLOCK else found.detail
        if mechanism == BUBBLEWRAP and os.geteuid() == 0:
            pytest.fail(f"as root bubblewrap must work (apt-get install bubblewrap; scripts/test installs it): "
                        f"{reason}")
        pytest.skip(f"{mechanism} does not work here: {reason}")
    return Confinement(mechanism, Path("/"), program=found.program)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "inside.txt").write_text("inside\n")
    return ws.resolve()


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the workspace and outside /tmp, with a file the tests try to change."""
    for parent in (Path.home(), Path(__file__).resolve().parents[2]):
        real = parent.resolve()
        if not str(real).startswith("/tmp/") and os.access(real, os.W_OK):
            break
    else:
        pytest.skip("no writable directory outside /tmp for the outside file")
    path = Path(tempfile.mkdtemp(prefix=".agentls-sandbox-test-", dir=real))
    (path / "precious.txt").write_text("original\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(params=MECHANISMS)
async def sandbox(request: pytest.FixtureRequest, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Confinement:
    found = await mechanism_or_skip(request.param, monkeypatch)
    return Confinement(found.mechanism, workspace, (), False, found.program)


async def run(command: str, cwd: Path, sandbox: Confinement | None, timeout: float = 60) -> CommandResult:
    return await run_process(CommandSpec(command=command, cwd=cwd, timeout=timeout, output_limit=200_000,
                                         tool_call_id="t", sandbox=sandbox))


class Loopback:
    """A TCP server on the host's 127.0.0.1 that answers "pong" and counts the connections it got."""

    def __init__(self) -> None:
        self.port = 0
        self.connections = 0

    def connect_command(self) -> str:
        return (f"{sys.executable} -c \"import socket; s = socket.create_connection(('127.0.0.1', {self.port}), "
                f"timeout=5); print(s.recv(9))\"")


@pytest.fixture
async def loopback() -> AsyncIterator[Loopback]:
    import asyncio

    state = Loopback()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state.connections += 1
        writer.write(b"pong\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    state.port = server.sockets[0].getsockname()[1]
    yield state
    server.close()
    await server.wait_closed()


@pytest.fixture(params=MECHANISMS)
async def mechanism(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each mechanism that works here, chosen the way a user's machine would (detection limited to it)."""
    found = await mechanism_or_skip(request.param, monkeypatch)
    monkeypatch.setenv(detect_module.ONLY_ENV, found.mechanism)
    return found.mechanism


@pytest.fixture
async def make(srv: ScriptedServer, workspace: Path) -> AsyncIterator[Factory]:
    pool = AgentPool()

    def factory(host: DiskHost | None = None, **kw: Any) -> AIAgent:
        options: dict[str, Any] = {"model": "m", "base_url": srv.openai_url, "api_key": "k", "workspace": workspace,
                                   "stream": False, "host": host, "titles": "prompt", "approval": "yolo"}
        options.update(kw)
        return pool.make(options)

    yield factory
    await pool.aclose()
