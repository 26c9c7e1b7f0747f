"""No command outlives its call: ``run_process`` reaps everything a command started (background jobs,
``setsid`` daemons, double forks, processes that closed their output) when it returns, times out or is
cancelled, also while it is still being spawned; a background job holding the output does not hold the
call; a command has no input. Then through ``agentls lsp``: closing the server leaves nothing running."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

import anyio
import pytest

from agentls.agent.host import CommandSpec
from agentls.agent.process import run_process
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .wire import LspProc, marked_pids, server_env

# Each writes the pid of what it leaves behind into a file named after it.
DAEMONS = {
    "background": "sleep 300 & echo $! > background",
    "setsid": "setsid sleep 301 & echo $! > setsid",
    "double-fork": "( ( sleep 302 & echo $! > double-fork ) & )",
    "nohup-closed-output": "nohup setsid sh -c 'echo $$ > nohup-closed-output; exec sleep 303' "
                           ">/dev/null 2>&1 </dev/null &",
    "daemon-env-cleared": "setsid env -i sh -c 'echo $$ > daemon-env-cleared; exec sleep 304' &",
}
# ... and waits until each has written it, so that the command ends with all of them running.
LEAVE_ALL = "\n".join(DAEMONS.values()) + f"\nfor f in {' '.join(DAEMONS)}; do while [ ! -s $f ]; do sleep 0.01; done; done"


def spec(command: str, cwd: Path, timeout: float = 60) -> CommandSpec:
    return CommandSpec(command=command, cwd=cwd, timeout=timeout, output_limit=10_000, tool_call_id="t")


def exists(pid: int) -> bool:
    """True while ``pid`` is alive or an unreaped zombie."""
    return Path(f"/proc/{pid}").exists()


async def pids_of(cwd: Path, names: list[str]) -> dict[str, int]:
    async def written(name: str) -> int:
        path = cwd / name
        with anyio.fail_after(10):
            while not (path.exists() and path.read_text().strip()):
                await asyncio.sleep(0.01)
        return int(path.read_text())
    return {name: await written(name) for name in names}


async def gone(pids: dict[str, int], timeout: float = 5) -> list[str]:
    """The names whose process still exists (alive or an unreaped zombie) after ``timeout``."""
    with contextlib.suppress(TimeoutError):
        with anyio.fail_after(timeout):
            while any(exists(p) for p in pids.values()):
                await asyncio.sleep(0.02)
    return [name for name, pid in pids.items() if exists(pid)]


def kill_all(pids: dict[str, int]) -> None:
    for pid in pids.values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


async def test_a_background_job_holding_the_output_does_not_hold_the_call(tmp_path: Path) -> None:
    with anyio.fail_after(30):  # before: the call waited for the job, 300 s
        result = await run_process(spec("sleep 300 & echo $! > background; echo started", tmp_path))
    assert result.exit_code == 0 and "started" in result.output
    pid = int((tmp_path / "background").read_text())
    try:
        assert await gone({"background": pid}) == [], "the background job outlived the command"
    finally:
        kill_all({"background": pid})


async def test_nothing_a_command_started_survives_its_end(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        result = await run_process(spec(LEAVE_ALL + "\necho done", tmp_path))
    pids = await pids_of(tmp_path, list(DAEMONS))
    try:
        assert "done" in result.output
        assert await gone(pids) == []
    finally:
        kill_all(pids)


async def test_nothing_survives_a_timeout(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        result = await run_process(spec(LEAVE_ALL + "\nsleep 305", tmp_path, timeout=1.5))
    pids = await pids_of(tmp_path, list(DAEMONS))
    try:
        assert result.timed_out
        assert await gone(pids) == []
    finally:
        kill_all(pids)


async def test_nothing_survives_a_cancellation(tmp_path: Path) -> None:
    task = asyncio.ensure_future(run_process(spec(LEAVE_ALL + "\nsleep 306", tmp_path)))
    pids = await pids_of(tmp_path, list(DAEMONS))
    try:
        task.cancel()
        with anyio.fail_after(10), contextlib.suppress(asyncio.CancelledError):
            await task
        assert await gone(pids) == []
    finally:
        kill_all(pids)


async def test_concurrent_commands_reap_only_their_own(tmp_path: Path) -> None:
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    a = asyncio.ensure_future(run_process(spec("setsid sleep 307 & echo $! > daemon; echo $$ > shell; sleep 308",
                                               a_dir)))
    a_pids = await pids_of(a_dir, ["daemon", "shell"])
    try:
        result = await run_process(spec("setsid sleep 309 & echo $! > daemon", b_dir))
        b_pids = await pids_of(b_dir, ["daemon"])
        assert result.exit_code == 0
        assert await gone(b_pids) == []
        assert all(exists(p) for p in a_pids.values()), "ending one command killed another's processes"
        assert not a.done()
        a.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await a
        assert await gone(a_pids) == []
    finally:
        kill_all(a_pids)


async def test_a_command_cancelled_by_a_scope_while_it_spawns_is_killed(tmp_path: Path) -> None:
    """The interrupt-during-spawn leak: an anyio scope cancels again at every await, so a cleanup that
    awaits the spawn is itself cancelled and the command lives on."""
    marker = "sleep 42.3456"

    def orphans() -> list[int]:
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                with contextlib.suppress(OSError):
                    if marker in Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode():
                        found.append(int(name))
        return found

    leaked: list[int] = []
    try:
        for ticks in range(16):
            with anyio.CancelScope() as scope:
                async def cancel_after(n: int = ticks) -> None:
                    for _ in range(n):
                        await asyncio.sleep(0)
                    scope.cancel()
                canceller = asyncio.ensure_future(cancel_after())
                await run_process(spec(f"echo go; {marker}", tmp_path))
            await canceller
            with contextlib.suppress(TimeoutError):
                with anyio.fail_after(2):
                    while orphans():
                        await asyncio.sleep(0.02)
            if orphans():
                leaked.append(ticks)
            for pid in orphans():
                os.kill(pid, signal.SIGKILL)
    finally:
        for pid in orphans():
            os.kill(pid, signal.SIGKILL)
    assert leaked == [], f"cancelled after {leaked} event-loop ticks, the command kept running"


async def test_a_command_has_no_input(tmp_path: Path) -> None:
    """A command never reads the caller's stdin (``agentls run`` in a terminal, a face's pipe): run in a
    process whose stdin stays open, ``cat`` must see end of input at once."""
    script = ("import asyncio, pathlib, sys\n"
              "from agentls.agent.host import CommandSpec\n"
              "from agentls.agent.process import run_process\n"
              "spec = CommandSpec(command='cat; echo read-done', cwd=pathlib.Path(sys.argv[1]), timeout=60, "
              "output_limit=1000, tool_call_id='t')\n"
              "print(asyncio.run(run_process(spec)).output, flush=True)\n")
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", script, str(tmp_path), stdin=PIPE, stdout=PIPE)
    try:
        assert proc.stdout is not None
        with anyio.fail_after(30):
            out = await proc.stdout.read()
        assert b"read-done" in out
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


# -- through agentls lsp -------------------------------------------------------------------------------

async def start(srv: ScriptedServer, workspace: Path, home: Path) -> LspProc:
    lsp = await LspProc.start(server_env(home), workspace, stderr=home / "stderr.log")
    # The process layer on its own: inside the OS sandbox a command sees its own PID namespace, so the
    # pids it writes down would not be the host's (tests/sandbox checks daemons inside the sandbox).
    await lsp.initialize(workspace, {"model": "scripted", "baseUrl": srv.openai_url, "approval": "yolo",
                                     "maxRetries": 0, "sandbox": "off"}, agent={"updates": True})
    return lsp


@pytest.mark.parametrize("how", ["shutdown", "end-of-input", "sigterm"])
async def test_closing_the_server_leaves_nothing_running(how: str, srv: ScriptedServer, workspace: Path,
                                                         home: Path) -> None:
    lsp = await start(srv, workspace, home)
    pids: dict[str, int] = {}
    try:
        sid = await lsp.new_session()
        done = await lsp.new_session()
        # one command that returned and left daemons behind, one still running when the server closes
        srv.push(tools(call("terminal", {"command": LEAVE_ALL})), text("left"))
        assert (await lsp.result("agent/turn", {"sessionId": done, "prompt": "go"}, 60))["completed"]
        pids.update({f"returned {k}": v for k, v in (await pids_of(workspace, list(DAEMONS))).items()})
        for name in DAEMONS:
            (workspace / name).unlink()
        srv.push(tools(call("terminal", {"command": LEAVE_ALL + "\nsleep 310"})), text("never"))
        lsp.start_request("agent/turn", {"sessionId": sid, "prompt": "go"})
        pids.update({f"running {k}": v for k, v in (await pids_of(workspace, list(DAEMONS))).items()})
        if how == "shutdown":
            assert await lsp.shutdown() == 0
        elif how == "end-of-input":
            lsp.close_stdin()
            assert await lsp.wait(30) == 0
        else:
            lsp.proc.send_signal(signal.SIGTERM)
            await lsp.wait(30)
        assert [n for n, p in pids.items() if exists(p) and Path(f"/proc/{p}/stat").read_text().split()[2] != "Z"] \
            == [], "processes outlived the server"
        assert marked_pids(lsp.mark) == []
    finally:
        kill_all(pids)
        await lsp.aclose()
