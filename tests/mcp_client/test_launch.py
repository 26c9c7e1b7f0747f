"""A server from the user's own config is kept from what a sandboxed command could plant in the workspace,
its working directory: ``npx`` from the project's ``node_modules``, ``python -m`` from the folder itself
(real npx and python processes; docs/sandbox.md). One the workspace's own files define runs as written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentls.agent.mcp.launch import kept_from_workspace
from agentls.agent.mcp.spec import ServerSpec, with_cwd

PACKAGE = "zz-agentls-planted-server"


def _run(spec: ServerSpec) -> str:
    assert spec.command is not None
    env = {**os.environ, **dict(spec.env), "npm_config_offline": "true", "npm_config_yes": "true"}
    done = subprocess.run([spec.command, *spec.args], cwd=spec.cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    return done.stdout + done.stderr


def _spec(workspace: Path, source: str, command: str, *args: str) -> ServerSpec:
    return with_cwd(ServerSpec(name="s", transport="stdio", command=command, args=args, source=source), str(workspace))


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    pkg = ws / "node_modules" / PACKAGE
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(f'{{"name": "{PACKAGE}", "version": "1.0.0", "bin": {{"{PACKAGE}": "i.js"}}}}')
    (pkg / "i.js").write_text("#!/usr/bin/env node\nconsole.log('PLANTED RAN')\n")
    (pkg / "i.js").chmod(0o755)
    (ws / "node_modules/.bin").mkdir()
    (ws / "node_modules/.bin" / PACKAGE).symlink_to(f"../{PACKAGE}/i.js")
    (ws / "mcp_server_zz.py").write_text("print('PLANTED RAN')\n")
    return ws


@pytest.mark.skipif(shutil.which("npx") is None, reason="npx is not installed")
def test_npx_from_the_users_config_does_not_run_the_workspaces_node_modules(planted: Path, tmp_path: Path) -> None:
    user = str(tmp_path / "config.toml")
    raw = _spec(planted, user, "npx", "-y", PACKAGE)
    assert "PLANTED RAN" in _run(raw)  # what npx does on its own: the test can fail
    kept = kept_from_workspace(raw, str(planted))
    assert "--prefix" in kept.args and "PLANTED RAN" not in _run(kept)
    own = _spec(planted, str(planted / ".mcp.json"), "npx", "-y", PACKAGE)
    assert kept_from_workspace(own, str(planted)) == own  # the project's own server runs as written


def test_python_m_from_the_users_config_does_not_import_from_the_workspace(planted: Path, tmp_path: Path) -> None:
    raw = _spec(planted, str(tmp_path / "config.toml"), sys.executable, "-m", "mcp_server_zz")
    assert "PLANTED RAN" in _run(raw)
    kept = kept_from_workspace(raw, str(planted))
    assert "PLANTED RAN" not in _run(kept) and "No module named" in _run(kept)
    script = _spec(planted, str(tmp_path / "config.toml"), sys.executable, "mcp_server_zz.py")
    assert kept_from_workspace(script, str(planted)) == script  # a script names its own folder: left as it is
