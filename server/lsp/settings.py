"""Settings for the LSP face: the core's layered settings, never fatal, plus the face's own options.

``initializationOptions`` > workspace ``.agentls.toml`` > user config > env (``agent.config``). A bad
value is reported (key, source, default) and left out, so the rest of the configuration still applies.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.agent.config import DAY, ConfigError, Settings, load_settings
from agentls.agent.config_values import BadValue, Fields, number

log = logging.getLogger("agentls.lsp.settings")

INIT_SOURCE = "initializationOptions"


@dataclass(frozen=True)
class LspOptions:
    """Options of the LSP face itself (in ``initializationOptions`` next to the core's settings)."""

    client_timeout: float = field(default=30.0, metadata=number(0.1, DAY, "seconds"))  # edits, terminals, progress
    permission_timeout: float = field(default=300.0, metadata=number(0.1, DAY, "seconds"))  # a person answers these


LSP_FIELDS = Fields(LspOptions)


def split_options(init_options: Any) -> tuple[dict[str, Any], LspOptions, list[str]]:
    """The core's settings, the face's options, and the problems found (as messages)."""
    if init_options is None:
        return {}, LspOptions(), []
    if not isinstance(init_options, Mapping):
        problem = f"{INIT_SOURCE} must be an object, not {type(init_options).__name__}; it was ignored"
        return {}, LspOptions(), [problem]
    core: dict[str, Any] = {}
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in init_options.items():
        name = LSP_FIELDS.name(key) if isinstance(key, str) else None
        if name is None:
            core[key] = value
            continue
        try:
            values[name] = LSP_FIELDS.convert(name, value)
        except BadValue as exc:
            problems.append(f"{INIT_SOURCE}: setting {key!r} {exc}; the default is used")
    return core, LspOptions(**values), problems


def load(workspace: Path | None, init_options: Mapping[str, Any]) -> tuple[Settings, list[str]]:
    """Merged settings and the problems met on the way (each names the key, where it came from and what is
    used instead). Every valid key of every layer applies; a bad one keeps the value of the layers below."""
    errors: list[ConfigError] = []
    settings = load_settings(workspace, init_options, errors=errors)
    return settings, [str(error) for error in errors]
