"""A model call to the local model waits long enough for its first byte (agent/endpoints.py): on a CPU the
whole prompt is processed before llama.cpp sends anything, so its read timeout is at least 900 s; a hosted
model keeps ``request_timeout``. The client is real (httpx) and nothing is started."""

from __future__ import annotations

import pytest

from agentls.agent.config import Settings
from agentls.agent.endpoints import LOCAL_READ_TIMEOUT, Endpoints


@pytest.mark.parametrize(("settings", "read"), [
    (Settings(provider="local", model="local"), LOCAL_READ_TIMEOUT),
    (Settings(provider="local", model="local", request_timeout=2000.0), 2000.0),
    (Settings(provider="openai", model="gpt-5", api_key="k"), 120.0),
    (Settings(provider="openai", model="gpt-5", api_key="k", request_timeout=5.0), 5.0),
    (Settings(provider="openai", model="gpt-5", api_key="k", fallback_models=("local",)), LOCAL_READ_TIMEOUT),
])
async def test_the_read_timeout_waits_for_the_local_model_s_prompt(settings: Settings, read: float) -> None:
    endpoints = Endpoints(settings)
    await endpoints.open()
    try:
        client = endpoints._client
        assert client is not None and client.timeout.read == read and client.timeout.connect == min(read, 15.0)
    finally:
        await endpoints.aclose()
