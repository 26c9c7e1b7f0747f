"""Which model to talk to and how: the primary endpoint, its fallbacks, one HTTP client, the providers
built for them, and the embedded local model when an endpoint is ``local``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from .providers.base import Provider
from .providers.factory import Endpoint, build_provider, parse_fallback


@dataclass(frozen=True)
class EndpointOptions:
    provider: str = "openai"
    model: str = ""
    base_url: str | None = None
    api_key: str | None = None
    tool_mode: str | None = None
    fallback_models: Sequence[Any] = ()
    context_window: int | None = None  # None: known from the model's name
    request_timeout: float = 120.0
    thinking_budget: int | None = None  # Anthropic extended thinking
    local_model_path: str | Path | None = None
    local_progress: Any = None  # Callable[[str, float], None] while the local model loads


class Endpoints:
    """Opens nothing until ``open``; ``provider_for`` builds each endpoint's provider on first use."""

    def __init__(self, options: EndpointOptions, http_client: httpx.AsyncClient | None = None) -> None:
        self.provider_name = options.provider
        self.model = options.model  # may change between turns (a client's model picker)
        self.api_key = options.api_key
        self._options = options
        self._fallbacks = list(options.fallback_models)
        self._client = http_client
        self._owns_client = http_client is None
        self._providers: dict[tuple[Any, ...], Provider] = {}
        self._local: Any = None  # LocalModelServer, started on first use
        self._window: tuple[str, int] | None = None

    @property
    def fallback_count(self) -> int:
        return len(self._fallbacks)

    def fallback_name(self, index: int) -> str:
        """How fallback ``index`` (1-based) reads in a log line."""
        return str(self._fallbacks[index - 1])

    @property
    def context_window(self) -> int:
        if self._options.context_window:
            return self._options.context_window
        if self.provider_name == "local":
            return 8192
        from .context.tokens import context_window_for

        cached = self._window
        if cached is None or cached[0] != self.model:
            cached = self._window = (self.model, context_window_for(self.model))
        return cached[1]

    def _primary(self) -> Endpoint:
        o = self._options
        return Endpoint(self.provider_name, self.model, o.base_url, self.api_key, o.tool_mode, o.thinking_budget)

    def _needs_tls(self) -> bool:
        """Whether any endpoint is https (loading the CA bundle costs ~50 ms; local servers don't need it)."""
        primary = self._primary()
        for endpoint in [primary, *(parse_fallback(f, primary) for f in self._fallbacks)]:
            if endpoint.provider != "local" and not (endpoint.base_url or "").startswith("http://"):
                return True
        return False

    async def open(self) -> None:
        if self._client is None:
            from .providers.http import make_client

            self._client = make_client(self._options.request_timeout, tls=self._needs_tls())

    async def provider_for(self, index: int, model: str | None = None) -> tuple[Provider, str]:
        """The provider of endpoint ``index`` (0: the primary, n: fallback n) and the model name to send."""
        primary = self._primary()
        endpoint = primary if index == 0 else parse_fallback(self._fallbacks[index - 1], primary)
        provider = self._providers.get(endpoint.key())
        if provider is None:
            assert self._client is not None, "Endpoints.open() comes first"
            base_url = None
            if endpoint.provider == "local":
                base_url = await self._local_url(endpoint.model)
            provider = build_provider(endpoint, self._client, base_url)
            if endpoint.provider == "local":  # the processed prompt survives the run (agent/local/slots.py)
                from .local.slots import SlotCachingProvider

                provider = SlotCachingProvider(provider, self._local)
            self._providers[endpoint.key()] = provider
        elif endpoint.provider == "local":
            await self._local_url(endpoint.model)
        return provider, model or endpoint.model

    async def _local_url(self, model: str) -> str:
        if self._local is None:
            from .local import shared

            path = self._options.local_model_path or (model[len("local:"):] if model.startswith("local:") else None)
            self._local = shared.acquire(self, Path(path) if path else None, progress=self._options.local_progress)
        url: str = await self._local.ensure_running()
        return url

    async def aclose(self) -> None:
        if self._local is not None:  # shared by the sessions of this process (agent/local/shared.py)
            from .local import shared

            await shared.release(self, self._local)
        if self._client is not None and self._owns_client:
            await self._client.aclose()
