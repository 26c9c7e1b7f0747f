"""What a sandboxed command can and cannot do, for each mechanism that works here (real processes)."""

from __future__ import annotations

import os
import sys
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from agentls.agent.sandbox.denial import find_denial
from agentls.agent.sandbox.policy import BUBBLEWRAP, LANDLOCK, Confinement

from .conftest import Loopback, run

PY = sys.executable


def untouched(outside: Path) -> None:
    assert (outside / "precious.txt").read_text() == "original\n"
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]


async def test_a_write_outside_the_workspace_fails_and_leaves_the_file(sandbox: Confinement, workspace: Path,
                                                                       outside: Path) -> None:
    result = await run(f"echo changed > {outside}/precious.txt", workspace, sandbox)
    assert result.exit_code != 0 and result.sandbox == sandbox.mechanism
    untouched(outside)
    denial = find_denial(result.output, result.exit_code, sandbox, workspace)
    assert denial is not None and denial.kind == "write", result.output
    # The same command without the sandbox does change it: the test can fail.
    plain = await run(f"echo changed > {outside}/new.txt", workspace, None)
    assert plain.exit_code == 0 and (outside / "new.txt").exists()


@pytest.mark.parametrize("attack", [
    "rm -f {out}/precious.txt",
    "touch {out}/created",
    "mkdir {out}/dir",
    "mv {out}/precious.txt ./stolen.txt",
    "ln -s {out} link && echo changed > link/precious.txt",
    "ln -s {out}/precious.txt file-link && echo changed > file-link",
    "echo changed > /proc/self/root{out}/precious.txt",
    "echo changed > /proc/$$/root{out}/precious.txt",
    "echo changed > {dotdot}/precious.txt",
    "cd {dotdot} && echo changed > precious.txt",
    "ln {out}/precious.txt hard && echo changed > hard",
    "{py} -c \"open('{out}/precious.txt', 'w').write('changed')\"",
    "{py} -c \"import os; os.rename('{out}/precious.txt', '{out}/renamed')\"",
    "cp inside.txt {out}/precious.txt",
    "sh -c 'echo changed > {out}/precious.txt'",
    "mount -o remount,rw / && echo changed > {out}/precious.txt",
    "unshare -rm sh -c 'mount -o remount,rw / && echo changed > {out}/precious.txt'",
    "unshare -rm sh -c 'mount --bind . {out} && echo changed > {out}/created'",
])
async def test_ways_out_are_closed(sandbox: Confinement, workspace: Path, outside: Path, attack: str) -> None:
    dotdot = os.path.relpath(outside, workspace)
    command = attack.format(out=outside, dotdot=dotdot, py=PY)
    result = await run(command, workspace, sandbox)
    assert result.exit_code != 0, f"{command}\n{result.output}"
    untouched(outside)


async def test_writes_inside_the_workspace_work(sandbox: Confinement, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    result = await run("echo new > made.txt && mkdir -p a/b && echo deep > a/b/c.txt && rm ../inside.txt "
                       "&& mv made.txt ../moved.txt && ln -s ../moved.txt link && cat link && echo ok > /dev/null "
                       "&& echo scratch > /tmp/agentls-scratch && cat /tmp/agentls-scratch && rm /tmp/agentls-scratch",
                       workspace / "sub", sandbox)
    assert result.exit_code == 0, result.output
    assert (workspace / "moved.txt").read_text() == "new\n"
    assert (workspace / "sub/a/b/c.txt").read_text() == "deep\n"
    assert not (workspace / "inside.txt").exists()
    assert result.output == "new\nscratch\n"


async def test_python_pytest_and_git_work_inside(sandbox: Confinement, workspace: Path) -> None:
    (workspace / "test_it.py").write_text("def test_it(tmp_path):\n    (tmp_path / 'x').write_text('y')\n")
    # --basetemp: under Landlock /tmp is the host's, and a pytest there would prune the old
    # /tmp/pytest-of-<user> runs, this test session's and other sessions' among them.
    result = await run(
        f"{PY} -c 'import json, sqlite3; print(json.dumps([1]))' && {PY} -m pytest -q -p no:cacheprovider "
        "--basetemp=.pytest-tmp "
        "&& git init -q && git add -A && git -c user.name=t -c user.email=t@example.com commit -qm first "
        "&& git log --oneline | wc -l && git status --short", workspace, sandbox)
    assert result.exit_code == 0, result.output
    assert "[1]" in result.output and "1 passed" in result.output
    assert result.output.rstrip().endswith("1")
    assert (workspace / ".git" / "HEAD").exists()


async def test_the_repository_hooks_and_config_stay_read_only(workspace: Path, sandbox: Confinement) -> None:
    if sandbox.mechanism == LANDLOCK:
        pytest.skip("Landlock can only allow whole hierarchies, not except a folder inside the workspace "
                    "(docs/reliability.md)")
    assert (await run("git init -q", workspace, None)).exit_code == 0
    before = (workspace / ".git/config").read_text()
    result = await run("echo 'exit 0' > .git/hooks/pre-commit", workspace, sandbox)
    assert result.exit_code != 0 and not (workspace / ".git/hooks/pre-commit").exists()
    result = await run("git config core.fsmonitor 'touch /tmp/pwned'", workspace, sandbox)
    assert result.exit_code != 0 and (workspace / ".git/config").read_text() == before
    result = await run("echo x > f && git add f && git -c user.name=t -c user.email=t@e commit -qm m", workspace,
                       sandbox)
    assert result.exit_code == 0, result.output


async def test_a_daemon_is_gone_when_the_command_returns(sandbox: Confinement, workspace: Path) -> None:
    marker = f"agentls-daemon-{uuid.uuid4().hex}"
    daemon = f"{PY} -c 'import time; time.sleep(300)' {marker}"
    # One daemon with its output elsewhere, one still holding the command's output pipe.
    result = await run(f"setsid {daemon} > /dev/null 2>&1 & (setsid {daemon} &) ; nohup {daemon} & sleep 0.5; "
                       "echo started", workspace, sandbox, timeout=60)
    assert not result.timed_out and result.exit_code == 0 and "started" in result.output
    assert _running(marker) == []


async def test_the_daemon_check_can_fail(workspace: Path) -> None:
    """A shell run directly (neither sandbox nor run_process's reaping) leaves the same daemon alive, and
    the probe of the test above finds it."""
    import asyncio

    marker = f"agentls-daemon-{uuid.uuid4().hex}"
    shell = await asyncio.create_subprocess_shell(
        f"setsid {PY} -c 'import time; time.sleep(300)' {marker} > /dev/null 2>&1 & sleep 0.5", cwd=workspace)
    assert await shell.wait() == 0
    pids = _running(marker)
    try:
        assert pids
    finally:
        for pid in pids:
            os.kill(pid, 9)


def _running(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline and b"setsid" not in cmdline and b"sleep 0.5" not in cmdline:
                found.append(int(entry))
    return found


async def test_network_off_blocks_a_loopback_server(sandbox: Confinement, workspace: Path,
                                                    loopback: Loopback) -> None:
    result = await run(loopback.connect_command(), workspace, sandbox)
    assert result.exit_code != 0 and "pong" not in result.output and loopback.connections == 0
    denial = find_denial(result.output, result.exit_code, sandbox, workspace)
    assert denial is not None and denial.kind == "network", result.output


async def test_network_on_reaches_it(sandbox: Confinement, workspace: Path, loopback: Loopback) -> None:
    result = await run(loopback.connect_command(), workspace, replace(sandbox, network=True))
    assert result.exit_code == 0 and "pong" in result.output, result.output
    assert loopback.connections == 1


async def test_extra_writable_paths(sandbox: Confinement, workspace: Path, outside: Path) -> None:
    result = await run(f"echo cache > {outside}/cache-entry", workspace, replace(sandbox, writable=(outside,)))
    assert result.exit_code == 0, result.output
    assert (outside / "cache-entry").read_text() == "cache\n"


async def test_bubblewrap_gives_a_private_tmp(sandbox: Confinement, workspace: Path, tmp_path: Path) -> None:
    if sandbox.mechanism != BUBBLEWRAP:
        pytest.skip("Landlock cannot hide /tmp: it stays writable and shared (docs/reliability.md)")
    (tmp_path / "host-file").write_text("host\n")
    result = await run(f"ls {tmp_path}; echo x > /tmp/private-file; cat {tmp_path}/host-file", workspace, sandbox)
    assert result.output.splitlines()[0] == "ws" and "host\n" not in result.output
    assert result.exit_code != 0 and not Path("/tmp/private-file").exists()


async def test_no_capabilities_and_no_new_privileges(sandbox: Confinement, workspace: Path) -> None:
    result = await run("grep -E '^(CapEff|NoNewPrivs)' /proc/self/status", workspace, sandbox)
    assert "CapEff:\t0000000000000000" in result.output and "NoNewPrivs:\t1" in result.output, result.output


async def test_the_command_sees_which_sandbox_it_is_in(sandbox: Confinement, workspace: Path) -> None:
    result = await run("echo $AGENTLS_SANDBOXED", workspace, sandbox)
    assert result.output.strip() == sandbox.mechanism


async def test_processes_outside_cannot_be_signalled(sandbox: Confinement, workspace: Path) -> None:
    import asyncio

    victim = await asyncio.create_subprocess_exec("sleep", "300")
    try:
        result = await run(f"kill -9 {victim.pid}", workspace, sandbox)
        assert result.exit_code != 0, result.output
        state = Path(f"/proc/{victim.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state in ("S", "R") and victim.returncode is None
    finally:
        victim.kill()
        await victim.wait()


async def test_a_timeout_kills_the_whole_command(sandbox: Confinement, workspace: Path) -> None:
    marker = f"agentls-timeout-{uuid.uuid4().hex}"
    result = await run(f"{PY} -c 'import time; time.sleep(300)' {marker} & {PY} -c 'import time; time.sleep(300)' "
                       f"{marker}", workspace, sandbox, timeout=1)
    assert result.timed_out
    await _gone(marker)


async def test_cancelling_kills_the_whole_command(sandbox: Confinement, workspace: Path) -> None:
    import asyncio

    marker = f"agentls-cancel-{uuid.uuid4().hex}"
    task = asyncio.ensure_future(run(f"{PY} -c 'import time; time.sleep(300)' {marker}", workspace, sandbox))
    for _ in range(500):
        if _running(marker):
            break
        await asyncio.sleep(0.01)
    assert _running(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _gone(marker)


async def test_a_timeout_also_ends_daemons(sandbox: Confinement, workspace: Path) -> None:
    """bubblewrap: the PID namespace. Landlock: its launcher is killed with the group, and the daemon is
    left to run_process's own reaping (agent/process_group.py)."""
    marker = f"agentls-timeout-daemon-{uuid.uuid4().hex}"
    result = await run(f"setsid {PY} -c 'import time; time.sleep(300)' {marker} > /dev/null 2>&1 & sleep 300",
                       workspace, sandbox, timeout=1)
    assert result.timed_out
    await _gone(marker)


async def _gone(marker: str) -> None:
    """SIGKILL is delivered at once but a process takes a moment to exit: wait for it (5 s at most)."""
    import asyncio

    for _ in range(500):
        if not _running(marker):
            return
        await asyncio.sleep(0.01)
    assert _running(marker) == [], _describe(_running(marker))


def _describe(pids: list[int]) -> str:
    lines = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            status = {k: v.strip() for k, v in (line.split(":", 1) for line in
                                                Path(f"/proc/{pid}/status").read_text().splitlines())}
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120]
            lines.append(f"{pid}: state {stat[0]} ppid {stat[1]} pgid {stat[2]} sid {stat[3]} "
                         f"NSpid {status.get('NSpid')} SigPnd {status.get('ShdPnd')} {cmd!r}")
        except OSError as exc:
            lines.append(f"{pid}: {exc}")
    return "\n".join(lines)
