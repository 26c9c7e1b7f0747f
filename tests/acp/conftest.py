"""Fixtures: the scripted model and the real ``agentls acp`` process behind a recording tee.

Each test module shares one agent process (``loop_scope="module"``); every test gets its own workspace
and sessions, and the frames the agent wrote during the test are validated against the ACP schema when
it ends. (No ``__init__.py`` here: ``tests/acp`` as a package would shadow the ``acp`` SDK.)
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from acp_harness.agent import Agent, agent_env, start_agent

from agentls.agent.scripted import ScriptedServer


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def scripted() -> AsyncIterator[ScriptedServer]:
    async with ScriptedServer() as srv:
        yield srv


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def acp(scripted: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Agent]:
    """The module's agent: a client with fs, terminal and ``session.compaction``."""
    home = tmp_path_factory.mktemp("agent")
    async with start_agent(home, agent_env(scripted, home), extra_caps={"session": {"compaction": {}}}) as agent:
        yield agent
    agent.check_frames()  # the whole conversation, the initialize answer included


@pytest.fixture
def frames_ok(acp: Agent, scripted: ScriptedServer) -> Iterator[Agent]:
    """Per test: a fresh model script, and every frame the agent sent during the test validated after it."""
    scripted.clear()
    acp.client.reset()
    start = acp.mark()
    yield acp
    acp.check_frames(start)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path
