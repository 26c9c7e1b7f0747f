"""Shared pieces of the hostile-workspace suites: special files, one turn through each face, process probes.

``one_turn(face, ...)`` runs one turn of scripted tool calls through ``agentls lsp``, ``agentls acp`` (a
client without ``fs`` or ``terminal``: the server's own disk host) or ``agentls run``, and returns the
tool results the model received. Every server runs with its address space capped (``MEMORY_CAP``), so a
reader that slurps ``/dev/zero`` dies instead of taking the machine with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import stat
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.scripted import ScriptedServer, text, tools

from .wire import MARK_VAR, AcpProc, LspProc, RpcProc, server_env

MEMORY_CAP = 4 * 1024 ** 3
FACES = ("lsp", "acp", "run")
TURN_TIMEOUT = 60.0
LIMITED = ("import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap})); "
           "sys.argv = ['agentls', *sys.argv[1:]]; runpy.run_module('agentls.server', run_name='__main__')")


def limited_command(*args: str) -> list[str]:
    """``python -m agentls.server ARGS`` with RLIMIT_AS at ``MEMORY_CAP``."""
    return [sys.executable, "-c", LIMITED.format(cap=MEMORY_CAP), *args]


class LimitedLsp(LspProc):
    @classmethod
    async def launch(cls, env: dict[str, str], cwd: Path, stderr: Path) -> LimitedLsp:
        with open(stderr, "ab") as err:  # noqa: ASYNC230
            proc = await asyncio.create_subprocess_exec(
                *limited_command("lsp"), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=err, env=env, cwd=str(cwd), limit=1 << 26)
        return cls(proc, env[MARK_VAR])


class LimitedAcp(AcpProc):
    @classmethod
    async def launch(cls, env: dict[str, str], cwd: Path, stderr: Path) -> LimitedAcp:
        with open(stderr, "ab") as err:  # noqa: ASYNC230
            proc = await asyncio.create_subprocess_exec(
                *limited_command("acp"), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=err, env=env, cwd=str(cwd), limit=1 << 26)
        return cls(proc, env[MARK_VAR])


# ----------------------------------------------------------------------------- special files
def make_fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def make_socket(path: Path) -> Path:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))  # the socket file stays after close
    sock.close()
    return path


def make_zero_device(path: Path) -> Path:
    """A character device like ``/dev/zero`` (root only; the test is skipped without the right)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("creating a character device needs CAP_MKNOD")
    return path


SPECIAL = {"fifo": make_fifo, "socket": make_socket, "device": make_zero_device}
KIND_WORDS = {"fifo": "FIFO", "socket": "socket", "device": "character device"}


def rchar(pid: int) -> int:
    """Bytes the process has read through read(2) and friends so far."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar")


# ----------------------------------------------------------------------------- one turn per face
@dataclass
class Turn:
    face: str
    results: list[str] = field(default_factory=list)  # the tool results the model got, in call order
    answer: Any = None  # the face's answer (LSP result, ACP stop reason, run exit code)
    stderr: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)  # server -> client (LSP/ACP)


def tool_results(srv: ScriptedServer) -> list[str]:
    return [str(m["content"]) for m in srv.requests[-1].messages if m["role"] == "tool"]


def run_env(home: Path, srv: ScriptedServer, **extra: str) -> dict[str, str]:
    return server_env(home, AGENTLS_MODEL="scripted", AGENTLS_BASE_URL=srv.openai_url, AGENTLS_APPROVAL="yolo",
                      AGENTLS_TITLES="prompt", **extra)


LSP_OPTIONS = {"model": "scripted", "approval": "yolo", "titles": "prompt", "maxRetries": 0}


@contextlib.asynccontextmanager
async def lsp_server(srv: ScriptedServer, ws: Path, home: Path, *, env: dict[str, str] | None = None,
                     options: dict[str, Any] | None = None, agent: dict[str, Any] | None = None,
                     capabilities: dict[str, Any] | None = None, timeout: float = TURN_TIMEOUT
                     ) -> AsyncIterator[LspProc]:
    lsp = await LimitedLsp.launch(env or server_env(home), ws, home / "stderr.log")
    try:
        await asyncio.wait_for(lsp.initialize(ws, {**LSP_OPTIONS, "baseUrl": srv.openai_url, **(options or {})},
                                              agent=agent, capabilities=capabilities), timeout)
        yield lsp
    finally:
        await lsp.aclose()


@contextlib.asynccontextmanager
async def acp_server(srv: ScriptedServer, ws: Path, home: Path, *, env: dict[str, str] | None = None,
                     timeout: float = TURN_TIMEOUT) -> AsyncIterator[AcpProc]:
    acp = await LimitedAcp.launch(env or run_env(home, srv), ws, home / "stderr.log")
    try:
        await asyncio.wait_for(acp.initialize(), timeout)
        yield acp
    finally:
        await acp.aclose()


async def run_cli(srv: ScriptedServer, ws: Path, home: Path, *args: str, env: dict[str, str] | None = None,
                  timeout: float = TURN_TIMEOUT) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *limited_command("run", "-w", str(ws), "--approval", "yolo", *args), env=env or run_env(home, srv),
        cwd=str(ws), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


async def one_turn(face: str, srv: ScriptedServer, ws: Path, home: Path, *calls: Any,
                   timeout: float = TURN_TIMEOUT) -> Turn:
    """One turn that makes ``calls`` (one round, in order) and then answers "done"."""
    srv.push(tools(*calls), text("done"))
    turn = Turn(face)
    if face == "lsp":
        async with lsp_server(srv, ws, home) as lsp:
            sid = await lsp.new_session()
            turn.answer = await lsp.result("agent/turn", {"sessionId": sid, "prompt": "go"}, timeout)
            turn.messages = lsp.messages
            assert await lsp.shutdown() == 0
    elif face == "acp":
        async with acp_server(srv, ws, home) as acp:
            sid = await acp.new_session(ws)
            answer = await acp.result("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]},
                                      timeout)
            turn.answer = answer["stopReason"]
            turn.messages = acp.messages
            acp.close_stdin()
            assert await acp.wait(30) == 0
    else:
        code, _, err = await run_cli(srv, ws, home, "go", timeout=timeout)
        turn.answer, turn.stderr = code, err
    turn.results = tool_results(srv)
    if face != "run":
        turn.stderr = (home / "stderr.log").read_text(errors="replace")
    return turn


def shown_messages(proc: RpcProc) -> list[str]:
    """What the user was told: status lines (``window/showMessage``, one short line each) and their whole text
    in the log (``window/logMessage``)."""
    return [str(m["params"]["message"]) for m in proc.messages
            if m.get("method") in ("window/showMessage", "window/logMessage")]
