"""Reading the sandbox's refusal from what real tools print when it stops them (and not when something
else does)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from agentls.agent.sandbox.denial import find_denial
from agentls.agent.sandbox.policy import BUBBLEWRAP, LANDLOCK, SEATBELT, Confinement

from .conftest import Loopback, run

PY = sys.executable

WRITES = [
    "touch {out}/new",
    "mkdir {out}/dir",
    "cp inside.txt {out}/",
    "rm {out}/precious.txt",
    "{py} -c \"open('{out}/precious.txt', 'a')\"",
    "{py} -c \"import pathlib; pathlib.Path('{out}/d').mkdir()\"",
    "git init -q {out}/repo",
    "node -e \"require('fs').writeFileSync('{out}/n', 'x')\"",
    "echo x | tee {out}/t",
]
NETWORK = [
    "{py} -c \"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}/', timeout=5)\"",
    "curl -sS --max-time 5 http://127.0.0.1:{port}/",
    "wget -T 5 -t 1 -O - http://127.0.0.1:{port}/",
    "git ls-remote http://127.0.0.1:{port}/repo.git",
    "node -e \"require('net').connect({port}, '127.0.0.1').on('error', e => {{ console.error(e.message); "
    "process.exit(1) }})\"",
]


def _needs(command: str) -> None:
    tool = command.split()[0]
    if "{" not in tool and shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")


@pytest.mark.parametrize("command", WRITES)
async def test_writes_outside_read_as_write_denials(sandbox: Confinement, workspace: Path, outside: Path,
                                                    command: str) -> None:
    _needs(command)
    result = await run(command.format(out=outside, py=PY), workspace, sandbox)
    denial = find_denial(result.output, result.exit_code, sandbox, workspace)
    assert denial is not None and denial.kind == "write", result.output


@pytest.mark.parametrize("command", NETWORK)
async def test_connections_read_as_network_denials(sandbox: Confinement, workspace: Path, loopback: Loopback,
                                                   command: str) -> None:
    _needs(command)
    result = await run(command.format(port=loopback.port, py=PY), workspace, sandbox)
    assert loopback.connections == 0
    denial = find_denial(result.output, result.exit_code, sandbox, workspace)
    assert denial is not None and denial.kind == "network", result.output


@pytest.mark.parametrize("command", [
    "ls missing-file",
    "{py} -c 'raise SystemExit(3)'",
    "chmod 000 secret && echo x > secret; cat secret",
    "mkdir ro && chmod 500 ro && touch ro/x",
    "echo 'echo hi' > s.sh && ./s.sh",
    "{py} -c \"open('missing/dir/f', 'w')\"",
])
async def test_other_failures_are_not_denials(sandbox: Confinement, workspace: Path, command: str) -> None:
    result = await run(command.format(py=PY), workspace, sandbox)
    assert result.exit_code != 0
    assert find_denial(result.output, result.exit_code, sandbox, workspace) is None, result.output


def test_a_command_that_succeeded_was_not_denied(tmp_path: Path) -> None:
    ws = Confinement(LANDLOCK, tmp_path)
    assert find_denial("touch: cannot touch '/etc/x': Permission denied", 0, ws, tmp_path) is None
    assert find_denial("touch: cannot touch '/etc/x': Permission denied", 1, ws, tmp_path) is not None


@pytest.mark.parametrize(("mechanism", "line", "kind"), [
    (BUBBLEWRAP, "touch: cannot touch '/etc/x': Read-only file system", "write"),
    (BUBBLEWRAP, "touch: cannot touch '/etc/x': Permission denied", None),  # bubblewrap refuses with EROFS
    (SEATBELT, "touch: /etc/x: Operation not permitted", "write"),
    (LANDLOCK, "OSError: [Errno 30] Read-only file system: '/usr/x'", "write"),
    (LANDLOCK, "PermissionError: [Errno 13] Permission denied: 'notes.txt'", None),  # inside the workspace
    (LANDLOCK, "EACCES: permission denied, open '/srv/x'", "write"),
    (LANDLOCK, "curl: (6) Could not resolve host: example.com", "network"),
    (BUBBLEWRAP, "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com", "network"),
    (BUBBLEWRAP, "ssh: connect to host github.com port 22: Network is unreachable", "network"),
])
def test_known_messages(tmp_path: Path, mechanism: str, line: str, kind: str | None) -> None:
    denial = find_denial(f"some output\n{line}\n", 1, Confinement(mechanism, tmp_path), tmp_path)
    assert (denial.kind if denial else None) == kind


def test_with_the_network_on_a_refused_connection_is_not_the_sandbox(tmp_path: Path) -> None:
    line = "curl: (7) Failed to connect to 127.0.0.1 port 9: Connection refused"
    assert find_denial(line, 7, Confinement(BUBBLEWRAP, tmp_path, network=True), tmp_path) is None
    assert find_denial(line, 7, Confinement(BUBBLEWRAP, tmp_path), tmp_path) is not None
