"""From settings to an agent: which model and endpoint to use, including the no-API-key default."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import DEFAULT_MODELS, ConfigError, Settings

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
    key = settings.api_key or settings.environment_key()
    if provider == "local":
        return ResolvedModel("local", settings.model or "local", None, None, settings.tool_mode or "json")
    if settings.model is None and key is None and settings.base_url is None:
        from .local import MISSING_EXTRA_MESSAGE, local_available

        if not local_available():
            raise ConfigError("model", "configuration", "is not set.\n\n" + MISSING_EXTRA_MESSAGE)
        return ResolvedModel("local", "local", None, None, settings.tool_mode or "json", is_default_local=True)
    model = settings.model or DEFAULT_MODELS.get(provider, "gpt-4.1-mini")
    return ResolvedModel(provider, model, settings.base_url, key, settings.tool_mode)


def resolved(settings: Settings) -> Settings:
    """``settings`` with the endpoint ``resolve_model`` chose written in: the provider, model, URL, key and
    tool mode an agent built from them uses."""
    r = resolve_model(settings)
    return replace(settings, provider=r.provider, model=r.model, base_url=r.base_url, api_key=r.api_key,
                   tool_mode=r.tool_mode)


def agent_from_settings(settings: Settings, *, workspace: Path, host: Host | None = None,
                        session_id: str | None = None, session_db: str | Path | SessionStore | None = None,
                        http_client: httpx.AsyncClient | None = None, **options: Any) -> AIAgent:
    """An ``AIAgent`` configured from merged settings (nothing is opened); ``options`` are more of
    ``AIAgent``'s keyword arguments (``system_message``, ``local_progress``...)."""
    from .agent import AIAgent

    if "workflows" not in options:  # command files, skills, hooks, memory (agent/workflows)
        from .config import user_config_path
        from .workflows import Workflows

        options["workflows"] = Workflows.from_config(workspace, user_config_path(),
                                                     trusted=settings.trust_workspace_config)
    return AIAgent(settings=resolved(settings), workspace=workspace, host=host, session_id=session_id,
                   session_db=session_db, http_client=http_client, **options)
