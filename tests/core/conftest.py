"""Fixtures for the core-loop suite: a real scripted provider, a real workspace, and an agent factory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.agent_pool import AgentPool

from agentls.agent.agent import AIAgent
from agentls.agent.scripted import ScriptedServer

from .helpers import Updates

AgentFactory = Callable[..., AIAgent]

APP_PY = '''"""A tiny app."""


def greet(name):
    return f"hello {name}"


def add(a, b):
    return a + b


def main():
    print(greet("world"))
'''


@pytest.fixture(params=[False, True], ids=["nostream", "stream"])
def stream(request: pytest.FixtureRequest) -> bool:
    value: bool = request.param
    return value


@pytest.fixture(params=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "build").mkdir()
    (ws / "README.md").write_text("# Demo project\n\nA tiny workspace for agentls tests.\n")
    (ws / "src" / "app.py").write_text(APP_PY)
    (ws / "src" / "util.py").write_text("def helper():\n    return 42\n")
    (ws / "notes.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    (ws / ".gitignore").write_text("build/\n*.log\n")
    (ws / "build" / "out.txt").write_text("compiled\n")
    (ws / "debug.log").write_text("noise\n")
    return ws


@pytest.fixture
def updates() -> Updates:
    return Updates()


def base_url(srv: ScriptedServer, wire: str) -> str:
    return srv.openai_url if wire == "openai" else srv.anthropic_url


@pytest.fixture
async def make_agent(srv: ScriptedServer, workspace: Path, updates: Updates) -> AsyncIterator[AgentFactory]:
    """``make_agent(wire="openai", stream=True, **AIAgent kwargs)``; every agent is closed at teardown."""
    pool = AgentPool()

    def factory(wire: str = "openai", stream: bool = True, **kw: Any) -> AIAgent:
        options: dict[str, Any] = {
            "model": "m", "base_url": base_url(srv, wire), "provider": wire, "api_key": "test-key",
            "workspace": workspace, "stream": stream, "on_update": updates, "retry_base_delay": 0.01,
            "retry_max_delay": 0.05, "request_timeout": 10.0, "titles": "prompt"}
        options.update(kw)
        return pool.make(options)

    yield factory
    await pool.aclose()
