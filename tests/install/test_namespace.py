"""agentls installs under one import package, ``agentls``: beside a distribution that owns a top-level
``agent`` package (as Hermes Agent does), both import and both work.

Real wheels, a real fresh venv, real pip; nothing from the network (dependencies come from the test
venv's site-packages through a path entry, the wheels are built here with ``--no-build-isolation``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False, **kw)  # type: ignore[call-overload]


def _other_agent_wheel(tmp: Path, out: Path) -> Path:
    """A distribution named ``other-agent`` whose import package is a top-level ``agent``."""
    src = tmp / "other"
    (src / "agent").mkdir(parents=True)
    (src / "agent" / "__init__.py").write_text("WHO = 'other-agent'\n")
    (src / "pyproject.toml").write_text(textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=69"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "other-agent"
        version = "1.0"
        [tool.setuptools]
        packages = ["agent"]
    """))
    done = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(src)])
    assert done.returncode == 0, done.stderr
    return next(out.glob("other_agent-*.whl"))


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    tmp = tmp_path_factory.mktemp("wheels")
    out = tmp / "dist"
    # A copy of the tracked tree, so the build leaves nothing in the checkout.
    tree = tmp / "src"
    files = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT).stdout.split("\0")
    for name in filter(None, files):
        target = tree / name
        target.parent.mkdir(parents=True, exist_ok=True)
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            target.write_bytes(source.read_bytes())
    built = _run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "-w", str(out),
                  str(tree)])
    assert built.returncode == 0, built.stderr
    ours = next(out.glob("agentls-*.whl"))
    return ours, _other_agent_wheel(tmp, out), built.stdout + built.stderr


def test_the_build_prints_no_deprecation(wheels: tuple[Path, Path, str]) -> None:
    log = wheels[2]
    assert "Deprecat" not in log and "deprecat" not in log, log


def test_the_wheel_holds_only_the_agentls_package(wheels: tuple[Path, Path, str]) -> None:
    import zipfile

    names = zipfile.ZipFile(wheels[0]).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"agentls"}, tops
    assert "agentls/agent/loop/turn.py" in names and "agentls/server/lsp/server.py" in names
    assert not any(n.startswith("agentls/__init__") for n in names)  # a namespace: nothing to collide on


def test_both_distributions_import_side_by_side(tmp_path: Path, wheels: tuple[Path, Path, str]) -> None:
    ours, theirs, _ = wheels
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    # Dependencies (pygls, httpx, ...) from this test's own environment, as a plain path entry: its .pth
    # files (our editable install's finder among them) are not processed from there.
    (site / "zz_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for wheel in (theirs, ours):
        done = _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index",
                     str(wheel)])
        assert done.returncode == 0, done.stderr
    check = textwrap.dedent("""
        import agent, agentls.agent, agentls.server.cli, agentls.agent.agent
        from agentls.agent import AIAgent
        assert agent.WHO == "other-agent", agent
        assert "site-packages/agentls/agent" in agentls.agent.__file__, agentls.agent.__file__
        assert not hasattr(agent, "AIAgent")
        print("ok")
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    done = _run([str(py), "-c", check], cwd=str(tmp_path), env=env)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    cli = _run([str(env_dir / "bin" / "agentls"), "--help"], cwd=str(tmp_path), env=env)
    assert cli.returncode == 0 and "agentls lsp" in cli.stdout, cli.stderr
    assert not (site / "server").exists() and (site / "agent" / "__init__.py").read_text().startswith("WHO")
