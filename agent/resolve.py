"""From settings to an agent: which model and endpoint to use, including the no-API-key default."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import DEFAULT_MODELS, ConfigError, Settings
from .sandbox.policy import config_from

if TYPE_CHECKING:
    import httpx

    from .agent import AIAgent
    from .host import Host
    from .sessions.store import SessionStore


@dataclass(frozen=True)
class ResolvedModel:
    provider: str
    model: str
    base_url: str | None
    api_key: str | None
    tool_mode: str | None
    is_default_local: bool = False


def resolve_model(settings: Settings) -> ResolvedModel:
    """The endpoint to use. With no model, no key and no URL, the embedded local model when installed;
    otherwise a ``ConfigError`` carrying the two ways forward."""
    provider = settings.resolved_provider()
    key = settings.api_key()
    if provider == "local":
        return ResolvedModel("local", settings.model or "local", None, None, settings.tool_mode or "json")
    if settings.model is None and key is None and settings.base_url is None:
        from .local import MISSING_EXTRA_MESSAGE, local_available

        if not local_available():
            raise ConfigError("model", "configuration", "is not set.\n\n" + MISSING_EXTRA_MESSAGE)
        return ResolvedModel("local", "local", None, None, settings.tool_mode or "json", is_default_local=True)
    model = settings.model or DEFAULT_MODELS.get(provider, "gpt-4.1-mini")
    return ResolvedModel(provider, model, settings.base_url, key, settings.tool_mode)


def agent_from_settings(settings: Settings, *, workspace: Path, host: Host | None = None,
                        session_id: str | None = None, session_db: str | Path | SessionStore | None = None,
                        http_client: httpx.AsyncClient | None = None, **overrides: Any) -> AIAgent:
    """An ``AIAgent`` configured from merged settings (nothing is opened)."""
    from .agent import AIAgent

    resolved = resolve_model(settings)
    kwargs: dict[str, Any] = dict(
        model=resolved.model, base_url=resolved.base_url, api_key=resolved.api_key, provider=resolved.provider,
        max_iterations=settings.max_iterations, fallback_models=settings.fallback_models, session_db=session_db,
        workspace=workspace, host=host, session_id=session_id, stream=settings.stream,
        tool_mode=resolved.tool_mode, small_model=settings.small_model, context_window=settings.context_window,
        compression_threshold=settings.compression_threshold, approval=settings.approval,
        allow_dangerous=settings.allow_dangerous, aux_model=settings.aux_model, titles=settings.titles,
        request_timeout=settings.request_timeout, max_retries=settings.max_retries, max_tokens=settings.max_tokens,
        temperature=settings.temperature, thinking_budget=settings.thinking_budget,
        terminal_timeout=settings.terminal_timeout,
        tool_output_limit=settings.tool_output_limit, trajectory_path=settings.trajectory_path,
        http_client=http_client,
        sandbox=config_from(settings.sandbox, settings.sandbox_network, settings.sandbox_writable))
    kwargs.update(overrides)
    return AIAgent(**kwargs)
