"""Fixtures for the workflows suite (agent/workflows, docs/workflows.md): a workspace, a user config folder,
a data dir, real hook programs (small Python scripts) and agents over the scripted provider."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.agent_pool import AgentPool

from agentls.agent.agent import AIAgent
from agentls.agent.sandbox.policy import SandboxConfig
from agentls.agent.scripted import ScriptedServer
from agentls.agent.workflows import Workflows

Make = Callable[..., AIAgent]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "README.md").write_text("# demo\n")
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config folder (``config.toml`` and its ``commands/``, ``skills/``) and data dir."""
    path = tmp_path / "home"
    (path / "data").mkdir(parents=True)
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(path / "data"))
    monkeypatch.setenv("AGENTLS_CONFIG", str(path / "config.toml"))
    return path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def hook_program(folder: Path, name: str, body: str) -> str:
    """A hook: a Python script reading its JSON input as ``event``; returns the command line that runs it."""
    script = write(folder / f"{name}.py", "import json, os, sys, time\nevent = json.load(sys.stdin)\n" + body)
    return f"{sys.executable} {script}"


def hooks_toml(entries: list[tuple[str, str, str | None, float | None]]) -> str:
    """``[[hooks.<event>]]`` tables for ``(event, command, matcher, timeout)``."""
    out = []
    for event, command, matcher, timeout in entries:
        out.append(f"[[hooks.{event}]]")
        out.append(f"command = {command!r}")
        if matcher is not None:
            out.append(f"matcher = {matcher!r}")
        if timeout is not None:
            out.append(f"timeout = {timeout}")
    return "\n".join(out) + "\n"


@pytest.fixture
async def make(srv: ScriptedServer, ws: Path, home: Path) -> AsyncIterator[Make]:
    """``make(**AIAgent kwargs)``: an agent with the workflows of ``ws`` and ``home`` (trusted=False unless said)."""
    pool = AgentPool()

    def factory(trusted: bool = False, updates: list[dict[str, Any]] | None = None, **kw: Any) -> AIAgent:
        async def on_update(update: dict[str, Any]) -> None:
            if updates is not None:
                updates.append(update)

        options: dict[str, Any] = {
            "model": "m", "base_url": srv.openai_url, "provider": "openai", "api_key": "k", "workspace": ws,
            "retry_base_delay": 0.01, "retry_max_delay": 0.05, "request_timeout": 10.0, "titles": "prompt",
            "approval": "yolo", "sandbox": SandboxConfig(mode="off"), "on_update": on_update,
            "workflows": Workflows.from_config(ws, home / "config.toml", trusted=trusted)}
        options.update(kw)
        return pool.make(options)

    yield factory
    await pool.aclose()


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.split(")")[-1].split()[0] != "Z"


def said(updates: list[dict[str, Any]]) -> str:
    """The agent's message text the user saw."""
    return "".join(u["content"]["text"] for u in updates if u.get("sessionUpdate") == "agent_message_chunk")
