"""Fixtures for testing the scripted provider itself."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the package may not be installed in the venv
    sys.path.insert(0, str(ROOT))

from agentls.agent.scripted import ScriptedServer

from .helpers import Api


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


@pytest.fixture
def api(srv: ScriptedServer, client: httpx.AsyncClient) -> Api:
    return Api(srv, client)
