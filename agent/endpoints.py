"""Which model to talk to and how: the primary endpoint, its fallbacks, one HTTP client, the providers
built for them, and the embedded local model when an endpoint is ``local``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from .config import Settings
from .providers.base import Provider
from .providers.factory import Endpoint, build_provider, parse_fallback

LOCAL_READ_TIMEOUT = 900.0  # seconds between bytes from the local model (its prompt is processed first)


class Endpoints:
    """Opens nothing until ``open``; ``provider_for`` builds each endpoint's provider on first use."""

    def __init__(self, settings: Settings, http_client: httpx.AsyncClient | None = None,
                 local_progress: Any = None) -> None:
        """``local_progress``: a ``Callable[[str, float], None]`` told how the local model's loading goes."""
        self.provider_name = settings.resolved_provider()
        # may change between turns (a client's model picker)
        self.model = settings.model or ("local" if self.provider_name == "local" else "")
        self.api_key = settings.api_key
        self._settings = settings
        self._local_progress = local_progress
        self._fallbacks = list(settings.fallback_models)
        self._client = http_client
        self._owns_client = http_client is None
        self._providers: dict[tuple[Any, ...], Provider] = {}
        self._local: Any = None  # LocalModelServer, started on first use
        self._window: tuple[str, int] | None = None

    @property
    def thinking_budget(self) -> int | None:
        return self._settings.thinking_budget

    @thinking_budget.setter
    def thinking_budget(self, value: int | None) -> None:
        """From the next call on (a client's config option)."""
        from dataclasses import replace

        self._settings = replace(self._settings, thinking_budget=value)

    @property
    def client(self) -> httpx.AsyncClient | None:
        """The one HTTP client (None before ``open``)."""
        return self._client

    @property
    def fallback_count(self) -> int:
        return len(self._fallbacks)

    def fallback_name(self, index: int) -> str:
        """How fallback ``index`` (1-based) reads in a log line."""
        return str(self._fallbacks[index - 1])

    @property
    def context_window(self) -> int:
        if self._settings.context_window:  # None: known from the model's name
            return self._settings.context_window
        if self.provider_name == "local":
            return 8192
        from .context.tokens import context_window_for

        cached = self._window
        if cached is None or cached[0] != self.model:
            cached = self._window = (self.model, context_window_for(self.model))
        return cached[1]

    def _primary(self) -> Endpoint:
        s = self._settings
        return Endpoint(self.provider_name, self.model, s.base_url, self.api_key, s.tool_mode, s.thinking_budget)

    def _all(self) -> list[Endpoint]:
        """The primary endpoint and the fallbacks, in order."""
        primary = self._primary()
        return [primary, *(parse_fallback(f, primary) for f in self._fallbacks)]

    def _read_timeout(self) -> float:
        """``request_timeout``, and at least ``LOCAL_READ_TIMEOUT`` when an endpoint is the local model: on a
        CPU it processes a long prompt (a pre-read of instructions and tests: 5,000 tokens at 35 a second)
        before it sends a first byte, and a retry would only start that over."""
        local = any(e.provider == "local" for e in self._all())
        return max(self._settings.request_timeout, LOCAL_READ_TIMEOUT) if local else self._settings.request_timeout

    def _needs_tls(self) -> bool:
        """Whether any endpoint is https (loading the CA bundle costs ~50 ms; local servers don't need it)."""
        for endpoint in self._all():
            if endpoint.provider != "local" and not (endpoint.base_url or "").startswith("http://"):
                return True
        return False

    async def open(self) -> None:
        if self._client is None:
            from .providers.http import make_client

            self._client = make_client(self._read_timeout(), tls=self._needs_tls())

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

            path = self._settings.local_model_path or (model[len("local:"):] if model.startswith("local:") else None)
            self._local = shared.acquire(self, Path(path) if path else None, progress=self._local_progress,
                                         keep_alive=self._settings.local_keep_alive)
        url: str = await self._local.ensure_running()
        return url

    async def aclose(self) -> None:
        if self._local is not None:  # shared by the sessions of this process (agent/local/shared.py)
            from .local import shared

            await shared.release(self, self._local)
        if self._client is not None and self._owns_client:
            await self._client.aclose()
