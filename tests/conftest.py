"""Fixtures every suite shares."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

# Each test's agent owns its local model server, which ends with it: a server kept loaded between runs
# (local_keep_alive, agent/local/keeper.py) would outlive the test. tests/local/test_keep_alive.py sets its own.
os.environ.setdefault("AGENTLS_LOCAL_KEEP_ALIVE", "0")

from agentls.agent.scripted import ScriptedServer


@pytest.fixture
async def srv() -> AsyncIterator[ScriptedServer]:
    """The project's scripted model provider: a real HTTP server on 127.0.0.1 (strict validation on)."""
    async with ScriptedServer() as server:
        yield server
