"""What the user is told about a session's configuration, whatever the face: settings that were ignored,
and the embedded local model standing in for a configured one. Faces decide how to show them (LSP: a
``window/showMessage`` each, once per process; ACP: a quoted note before the session's first answer;
``agentls run``: stderr)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentls.agent.config import ConfigError, Settings

Level = Literal["info", "warning"]


@dataclass(frozen=True)
class Notice:
    text: str
    level: Level = "info"


def settings_notices(settings: Settings) -> list[Notice]:
    """Settings a workspace file may not change (a looser approval, where the key is sent, …)."""
    return [Notice(str(warning), "warning") for warning in settings.warnings]


def model_notices(settings: Settings) -> list[Notice]:
    """The local-model notice when the embedded model stands in because nothing else is configured."""
    from agentls.agent.resolve import resolve_model

    try:
        default_local = resolve_model(settings).is_default_local
    except ConfigError:
        return []
    if not default_local:
        return []
    from agentls.agent.local import LOCAL_MODEL_NOTICE

    return [Notice(LOCAL_MODEL_NOTICE, "info")]


def session_notices(settings: Settings) -> list[Notice]:
    return settings_notices(settings) + model_notices(settings)
