"""The command lines each mechanism gets, and what detection reports (the macOS profile cannot run here:
its text is checked instead)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentls.agent.sandbox.bwrap import bwrap_argv
from agentls.agent.sandbox.policy import (
    BUBBLEWRAP,
    LANDLOCK,
    SEATBELT,
    Confinement,
    SandboxConfig,
    writable_paths,
)
from agentls.agent.sandbox.seatbelt import profile, seatbelt_argv
from agentls.agent.sandbox.session import CommandSandbox
from agentls.agent.sandbox.wrap import LAUNCHER, confine

from .conftest import run

ARGV = ["/bin/sh", "-c", "true"]


def _pairs(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def test_bwrap_mounts_tmp_before_the_workspace_under_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    cache = Path("/home/u/.cache")
    args = bwrap_argv("bwrap", Confinement(BUBBLEWRAP, ws, (cache, Path("/home/u")), False), ws, ARGV)
    order = [i for i, a in enumerate(args) if a in ("--tmpfs", "--bind", "--bind-try")]
    targets = [args[i + 1] for i in order]
    assert targets[0] == "/tmp" and targets[-1] == str(ws)
    assert targets.index("/home/u") < targets.index(str(cache))  # parents first, or the child is hidden
    assert args[args.index("--ro-bind") + 1:args.index("--ro-bind") + 3] == ["/", "/"]
    assert args.index("--ro-bind") < args.index("--tmpfs")
    assert "--unshare-net" in args and ["--cap-drop", "ALL"] == args[args.index("--cap-drop"):][:2]
    assert args[-3:] == ARGV and args[-4] == "--"
    assert targets[-1] == str(ws) and "--ro-bind-try" not in args[args.index(str(ws)):]


def test_bwrap_pins_the_way_to_what_it_protects_after_the_workspace(tmp_path: Path) -> None:
    """.git is bound onto itself (a mount point: it cannot be renamed or replaced), then its hooks, config and
    info read-only; all after the workspace, or the workspace's bind would cover them."""
    ws = (tmp_path / "ws").resolve()
    (ws / ".git/hooks").mkdir(parents=True)
    (ws / ".git/HEAD").write_text("ref: refs/heads/main\n")
    (ws / ".git/config").write_text("")
    (ws / ".vscode").mkdir()
    args = bwrap_argv("bwrap", Confinement(BUBBLEWRAP, ws), ws, ARGV)
    after = args[args.index(str(ws)) + 2:]
    assert _pairs(after, "--bind") == [str(ws / ".git")]
    readonly = _pairs(after, "--ro-bind")
    assert {str(ws / ".vscode"), str(ws / ".git/hooks"), str(ws / ".git/config"), str(ws / ".git/info")} <= set(readonly)
    assert (ws / ".git/info").is_dir()  # made, so a command cannot make it


def test_bwrap_binds_the_sessions_tmp_first(tmp_path: Path) -> None:
    ws, own = tmp_path / "ws", tmp_path / "own-tmp"
    args = bwrap_argv("bwrap", Confinement(BUBBLEWRAP, ws, tmp=own), ws, ARGV)
    binds = [(args[i + 1], args[i + 2]) for i, a in enumerate(args) if a == "--bind"]
    assert binds == [(str(own), "/tmp"), (str(ws), str(ws))] and "--tmpfs" not in args


def test_bwrap_with_the_network_on_shares_it(tmp_path: Path) -> None:
    args = bwrap_argv("bwrap", Confinement(BUBBLEWRAP, tmp_path, network=True), tmp_path, ARGV)
    assert "--unshare-net" not in args and "--unshare-pid" in args and "--die-with-parent" in args


def test_landlock_runs_the_launcher_by_path_without_site_packages(tmp_path: Path) -> None:
    args = confine(ARGV, Confinement(LANDLOCK, tmp_path, (Path("/x"),), False, sys.executable), tmp_path)
    assert args[:4] == [sys.executable, "-I", "-S", "-c"] and args[5] == "nonet" and Path(LAUNCHER).is_file()
    assert args[6:8] == [str(tmp_path), "/x"] and "/tmp" in args and args[-4] == "--"


def test_seatbelt_profile_takes_paths_as_parameters() -> None:
    ws = Path("/Users/me/my \"odd\" (project)")
    conf = Confinement(SEATBELT, ws, (Path("/Users/me/.npm"),), False)
    text = profile(conf)
    assert "(deny file-write*)" in text and '(subpath (param "WORKSPACE"))' in text
    assert '(subpath (param "WRITABLE_0"))' in text and "(deny network*)" in text
    assert str(ws) not in text and text.count("(") == text.count(")")
    args = seatbelt_argv("/usr/bin/sandbox-exec", conf, ws, ARGV)
    assert args[:2] == ["/usr/bin/sandbox-exec", "-p"] and f"WORKSPACE={ws}" in args and args[-3:] == ARGV
    assert "(deny file-write* (literal" not in text  # nothing of agentls's lies under this workspace


def test_seatbelt_denies_the_way_to_what_it_protects(tmp_path: Path) -> None:
    ws = (tmp_path / "ws").resolve()
    (ws / ".git/hooks").mkdir(parents=True)
    (ws / ".git/HEAD").write_text("ref: refs/heads/main\n")
    conf = Confinement(SEATBELT, ws)
    text, args = profile(conf), seatbelt_argv("/usr/bin/sandbox-exec", conf, ws, ARGV)
    assert '(literal (param "PIN_0"))' in text and '(subpath (param "PROTECTED_0"))' in text
    assert f"PIN_0={ws / '.git'}" in args and f"{ws / '.git/hooks'}" in " ".join(args)
    assert str(ws) not in text and text.count("(") == text.count(")")
    assert "(deny network*)" not in profile(Confinement(SEATBELT, ws, network=True))


def test_writable_paths_expand_resolve_and_skip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home/.cache").mkdir(parents=True)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    found = writable_paths(("~/.cache", "~/.npm", str(tmp_path / "link"), "relative/path", "/", str(ws / "sub"),
                            str(tmp_path / "real")), ws)
    assert found == ((tmp_path / "home/.cache").resolve(), (tmp_path / "real").resolve())


async def test_status_names_the_active_mechanism(workspace: Path) -> None:
    status = await CommandSandbox(SandboxConfig(), workspace).status()
    assert set(status) >= {"mode", "network", "mechanism", "detail", "writable"}
    assert status["mode"] == "auto" and status["network"] == "off" and status["writable"][0] == str(workspace)
    off = await CommandSandbox(SandboxConfig(mode="off"), workspace).status()
    assert off["mechanism"] is None and off["detail"] == "turned off"


async def test_a_module_in_the_working_directory_cannot_replace_the_launchers(tmp_path: Path) -> None:
    from .conftest import landlock_support

    if landlock_support():
        pytest.skip(landlock_support())
    for name in ("ctypes", "landlock", "os", "_signal"):
        (tmp_path / f"{name}.py").write_text("raise SystemExit('hijacked')\n")
    conf = Confinement(LANDLOCK, tmp_path, program=sys.executable)
    result = await run("echo fine", tmp_path, conf)
    assert result.exit_code == 0 and result.output == "fine\n", result.output


async def test_an_odd_workspace_path(sandbox: Confinement, tmp_path: Path) -> None:
    ws = tmp_path / "a b'c\"d $(x)"
    ws.mkdir()
    from dataclasses import replace

    result = await run("echo ok > f && cat f", ws, replace(sandbox, workspace=ws.resolve()))
    assert result.exit_code == 0 and result.output == "ok\n" and (ws / "f").exists()
