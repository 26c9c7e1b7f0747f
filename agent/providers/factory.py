"""Builds providers for an agent: the primary endpoint, fallbacks, and the embedded local model."""

from __future__ import annotations

import functools
import ssl
from dataclasses import dataclass
from typing import Any

import httpx

from ..config import DEFAULT_BASE_URLS
from ..local import is_local_model
from .anthropic import AnthropicProvider
from .base import Provider
from .openai import OpenAIProvider
from .responses import ResponsesProvider


@functools.lru_cache(maxsize=1)
def shared_ssl_context() -> ssl.SSLContext:
    """One SSL context for the process: building one costs milliseconds and memory per client."""
    return httpx.create_ssl_context()


@dataclass(frozen=True)
class Endpoint:
    provider: str  # openai | anthropic | openai-responses | local
    model: str
    base_url: str | None
    api_key: str | None
    tool_mode: str | None = None
    thinking_budget: int | None = None

    def key(self) -> tuple[str, str | None, str | None, str | None, int | None]:
        return (self.provider, self.base_url, self.api_key, self.tool_mode, self.thinking_budget)


def parse_fallback(entry: Any, primary: Endpoint) -> Endpoint:
    """A fallback is a model name on the primary endpoint, or a dict {model, provider?, base_url?, api_key?}."""
    if isinstance(entry, str):
        if is_local_model(entry):
            return Endpoint("local", entry, None, None, "json")
        return Endpoint(primary.provider, entry, primary.base_url, primary.api_key, primary.tool_mode,
                        primary.thinking_budget)
    if isinstance(entry, dict) and isinstance(entry.get("model"), str):
        provider = str(entry.get("provider") or primary.provider)
        same = provider == primary.provider
        return Endpoint(provider, entry["model"],
                        entry.get("base_url") or entry.get("baseUrl") or (primary.base_url if same else None),
                        entry.get("api_key") or (primary.api_key if same else None),
                        entry.get("tool_mode") or (primary.tool_mode if same else None),
                        primary.thinking_budget if same else None)
    raise ValueError(f"a fallback model must be a name or {{model, provider, base_url}}, not {entry!r}")


def build_provider(endpoint: Endpoint, client: httpx.AsyncClient, base_url: str | None = None) -> Provider:
    url = base_url or endpoint.base_url
    if endpoint.provider == "anthropic":
        return AnthropicProvider(base_url=url or DEFAULT_BASE_URLS["anthropic"], api_key=endpoint.api_key,
                                 client=client, thinking_budget=endpoint.thinking_budget)
    if endpoint.provider == "openai-responses":
        return ResponsesProvider(base_url=url or DEFAULT_BASE_URLS["openai-responses"], api_key=endpoint.api_key,
                                 client=client)
    mode = endpoint.tool_mode or ("json" if endpoint.provider == "local" else "native")
    return OpenAIProvider(base_url=url or DEFAULT_BASE_URLS["openai"], api_key=endpoint.api_key, client=client,
                          tool_mode=mode, act_first=endpoint.provider == "local")
