"""Nothing agentls runs, loads or trusts later, outside the sandbox, can be changed from inside it, even
when the folder that holds it is writable (a user who made all of ``~/.cache`` writable, as the default
once did): the model and its stamp, agentls's config and hooks folder, the data dir and session store,
the venv it runs from, the MCP servers it starts. And what lives under ``/tmp`` (a clone, its venv, tools
on ``PATH``) stays visible inside bubblewrap's private ``/tmp``. Real processes under each mechanism."""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from agentls.agent.local import model as bundled
from agentls.agent.mcp.spec import ServerSpec
from agentls.agent.sandbox.policy import BUBBLEWRAP, Confinement, SandboxConfig
from agentls.agent.sandbox.protect import mcp_paths
from agentls.agent.sandbox.session import CommandSandbox

from .conftest import run


@pytest.fixture
def home(outside: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """agentls's folders where the platform puts them, under a folder the sandbox may write."""
    for name in ("AGENTLS_CONFIG", "AGENTLS_DATA_DIR", "AGENTLS_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache")):
        (outside / sub).mkdir()
        monkeypatch.setenv(var, str(outside / sub))
    (outside / "config/agentls").mkdir()
    (outside / "config/agentls/config.toml").write_text('model = "good"\n')
    (outside / "data/agentls").mkdir()
    (outside / "data/agentls/sessions.db").write_text("db")
    (outside / "cache/pip").mkdir()  # another tool's cache, beside agentls's
    return outside


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_bytes().hex() if p.is_file() else "/" for p in sorted(root.rglob("*"))
            if "pip" not in p.parts}


ATTACKS = [
    "echo '#evil' > {cache}/agentls/models/{model}",
    "echo evil > {cache}/agentls/models/{model}.verified.json",
    "mv {cache}/agentls {cache}/old && mkdir -p {cache}/agentls/models && echo evil > {cache}/agentls/models/{model}",
    "mv {cache} {home}/cache-old && mkdir -p {cache}/agentls/models && echo evil > {cache}/agentls/models/{model}",
    "mv {cache}/agentls/models {cache}/agentls/m2 && mkdir {cache}/agentls/models",
    "rm -rf {cache}/agentls",
    "ln -sfn {home} {cache}/agentls/models",
    "echo 'model = \"evil\"' > {home}/config/agentls/config.toml",
    "mkdir -p {home}/config/agentls/hooks && echo evil > {home}/config/agentls/hooks/pre",
    "mv {home}/config/agentls {home}/config/a2 && mkdir {home}/config/agentls",
    "rm {home}/data/agentls/sessions.db",
    "mkdir -p {home}/data/agentls/verified-models && echo evil > {home}/data/agentls/verified-models/x.json",
    "mv {home}/data {home}/data2 && mkdir -p {home}/data/agentls",
]


async def test_agentls_own_files_stay_read_only(sandbox: Confinement, home: Path) -> None:
    parts = home / "parts.bin"
    parts.write_bytes(os.urandom(4096))
    blob = parts.read_bytes()
    expect = {"expected_sha256": hashlib.sha256(blob).hexdigest(), "expected_size": len(blob)}
    dest = await bundled.ensure_model(parts=[parts], **expect)
    assert dest == home / "cache/agentls/models" / bundled.MODEL_FILENAME
    before = snapshot(home)
    conf = replace(sandbox, writable=(home,))  # all of it writable, the parents of agentls's folders too
    for attack in ATTACKS:
        command = attack.format(home=home, cache=home / "cache", model=bundled.MODEL_FILENAME)
        result = await run(command, sandbox.workspace, conf)
        assert result.exit_code != 0, f"{command}\n{result.output}"
        assert snapshot(home) == before, command
    assert await bundled.stamp_matches(dest, **expect)
    # Beside them, the other tool's cache is still writable.
    assert (await run(f"echo ok > {home}/cache/pip/f", sandbox.workspace, conf)).exit_code == 0


async def test_the_attacks_change_the_files_without_the_sandbox(home: Path, workspace: Path) -> None:
    before = snapshot(home)
    await run(ATTACKS[7].format(home=home), workspace, None)
    assert snapshot(home) != before


async def test_the_venv_agentls_runs_from_stays_read_only(sandbox: Confinement, outside: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    venv = outside / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin/activate").write_text("# good\n")
    monkeypatch.setattr(sys, "prefix", str(venv))
    conf = replace(sandbox, writable=(outside,))
    for attack in (f"echo evil >> {venv}/bin/activate", f"mv {venv} {outside}/v2 && mkdir -p {venv}/bin",
                   f"touch {venv}/bin/python3-evil"):
        result = await run(attack, sandbox.workspace, conf)
        assert result.exit_code != 0, f"{attack}\n{result.output}"
    assert sorted(p.name for p in (venv / "bin").iterdir()) == ["activate"]
    assert (venv / "bin/activate").read_text() == "# good\n"


async def test_what_an_mcp_server_runs_stays_read_only(sandbox: Confinement, outside: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    server = outside / "server.py"
    server.write_text("# the server\n")
    program = outside / "bin/run-server"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    specs = [ServerSpec("s", "stdio", command="run-server", args=("-v", "server.py"), cwd=str(outside),
                        env=(("PATH", str(program.parent)),))]
    assert set(mcp_paths(specs)) >= {program.resolve(), server.resolve()}
    session = CommandSandbox(SandboxConfig(writable=(str(outside),)), sandbox.workspace)
    session.protect_servers(specs)
    monkeypatch.setenv("AGENTLS_SANDBOX_MECHANISMS", sandbox.mechanism)
    plan = await session.plan(None)
    assert plan.confinement is not None and plan.confinement.mechanism == sandbox.mechanism
    for attack in (f"echo evil > {server}", f"echo evil > {program}", f"mv {outside}/bin {outside}/b2"):
        result = await run(attack, sandbox.workspace, plan.confinement)
        assert result.exit_code != 0, f"{attack}\n{result.output}"
    assert server.read_text() == "# the server\n" and program.read_text() == "#!/bin/sh\n"
    assert (await run(f"echo ok > {outside}/other", sandbox.workspace, plan.confinement)).exit_code == 0 \
        or sandbox.mechanism != BUBBLEWRAP  # Landlock: a carved folder takes no new files (docs/sandbox.md)
    status = await session.status()
    assert str(server.resolve()) in status["protected"] and status["unprotected"] == []
    await session.close()


def test_a_launcher_cache_is_protected_for_npx_and_uvx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("npx", "uvx"):
        (bindir / name).write_text("#!/bin/sh\n")
        (bindir / name).chmod(0o755)
    env = (("PATH", str(bindir)),)
    found = mcp_paths([ServerSpec("a", "stdio", command="npx", args=("-y", "pkg"), env=env),
                       ServerSpec("b", "stdio", command="uvx", args=("pkg",), env=env)])
    assert {tmp_path / ".npm/_npx", tmp_path / ".cache/uv"} <= set(found)


async def test_a_venv_and_tools_under_tmp_stay_visible(sandbox: Confinement, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A workspace, a venv and a tool on PATH all under /tmp: bubblewrap's private /tmp must not hide them;
    the venv and the tool stay read-only."""
    assert str(tmp_path).startswith("/tmp/")
    venv = tmp_path / "venv"
    await anyio.run_process([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "mytool").write_text("#!/bin/sh\necho tool ran\n")
    (tools / "mytool").chmod(0o755)
    monkeypatch.setenv("PATH", f"{venv / 'bin'}:{tools}:{os.environ['PATH']}")
    own_tmp = tmp_path / "session-tmp"
    own_tmp.mkdir()
    conf = replace(sandbox, tmp=own_tmp if sandbox.mechanism == BUBBLEWRAP else None)
    result = await run("python -c 'import sys; print(sys.prefix)' && mytool && echo x > in-ws && cat in-ws",
                       sandbox.workspace, conf)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [str(venv), "tool ran", "x"]
    for attack in (f"touch {venv}/bin/evil", f"echo evil > {tools}/mytool"):
        denied = await run(attack, sandbox.workspace, conf)
        assert denied.exit_code != 0 or sandbox.mechanism != BUBBLEWRAP, denied.output
    if sandbox.mechanism == BUBBLEWRAP:
        assert not (venv / "bin/evil").exists() and (tools / "mytool").read_text().endswith("tool ran\n")
