"""Fixtures every suite shares."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentls.agent.scripted import ScriptedServer


@pytest.fixture
async def srv() -> AsyncIterator[ScriptedServer]:
    """The project's scripted model provider: a real HTTP server on 127.0.0.1 (strict validation on)."""
    async with ScriptedServer() as server:
        yield server
