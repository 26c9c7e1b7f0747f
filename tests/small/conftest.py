"""Fixtures for the small-model suite: what a confused 1.5B model does, played by the scripted provider.

The workspace is ``.../hello`` (like examples/hello), so a path with the workspace folder's name in
front (``hello/greet.py``) is one of the cases.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.agent_pool import AgentPool

from agentls.agent.agent import AIAgent
from agentls.agent.result import TurnResult
from agentls.agent.scripted import ScriptedServer

GREET = '''import sys


def greet(name):
    return "Hello, " + name + "!"


if __name__ == "__main__":
    print(greet(sys.argv[1] if len(sys.argv) > 1 else "world"))
'''

AgentFactory = Callable[..., AIAgent]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "hello"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "README.md").write_text("# hello\n\nA tiny example project.\n")
    (ws / "greet.py").write_text(GREET)
    (ws / "src" / "pkg" / "util.py").write_text("def helper():\n    return 42\n")
    (ws / "src" / "pkg" / "config.toml").write_text("[tool]\nname = 'demo'\n")
    return ws


@pytest.fixture
async def make_agent(srv: ScriptedServer, workspace: Path) -> AsyncIterator[AgentFactory]:
    pool = AgentPool()

    def factory(**kw: Any) -> AIAgent:
        options: dict[str, Any] = {"model": "m", "base_url": srv.openai_url, "provider": "openai", "api_key": "k",
                                   "workspace": workspace, "approval": "auto-edit", "retry_base_delay": 0.01,
                                   "request_timeout": 10.0}
        options.update(kw)
        return pool.make(options)

    yield factory
    await pool.aclose()


def results(result: TurnResult) -> list[str]:
    """The tool results of a turn, in order."""
    return [str(m["content"]) for m in result.messages if m.get("role") == "tool"]
