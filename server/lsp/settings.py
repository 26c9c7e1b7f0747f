"""Settings for the LSP face: the core's layered settings, never fatal, plus the face's own options.

``initializationOptions`` > workspace ``.agentls.toml`` > user config > env (``agent.config``). A bad
value is reported (key and source) and left out, so the rest of the configuration still applies.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.agent.config import _ALIASES, ConfigError, Settings, load_settings, merge

log = logging.getLogger("agentls.lsp.settings")

INIT_SOURCE = "initializationOptions"


@dataclass(frozen=True)
class LspOptions:
    """Options of the LSP face itself (in ``initializationOptions`` next to the core's settings)."""

    client_timeout: float = 30.0  # edits, terminal requests, progress creation
    permission_timeout: float = 300.0  # a person has to answer these


LSP_KEYS = {"clientTimeout": "client_timeout", "permissionTimeout": "permission_timeout"}


def split_options(init_options: Any) -> tuple[dict[str, Any], LspOptions, list[str]]:
    """The core's settings, the face's options, and the problems found (as messages)."""
    if init_options is None:
        return {}, LspOptions(), []
    if not isinstance(init_options, Mapping):
        problem = f"{INIT_SOURCE} must be an object, not {type(init_options).__name__}; it was ignored"
        return {}, LspOptions(), [problem]
    core: dict[str, Any] = {}
    values: dict[str, float] = {}
    problems: list[str] = []
    for key, value in init_options.items():
        field_name = LSP_KEYS.get(key)
        if field_name is None:
            core[key] = value
        elif isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            values[field_name] = float(value)
        else:
            problems.append(f"{INIT_SOURCE}: setting {key!r} must be a positive number of seconds, not {value!r}; "
                            "the default is used")
    return core, LspOptions(**values), problems


def _field(key: str) -> str:
    return _ALIASES.get(key, key.replace("-", "_"))


def load(workspace: Path | None, init_options: Mapping[str, Any]) -> tuple[Settings, list[str]]:
    """Merged settings and the problems met on the way (each names the key and where it came from).

    A bad init option is dropped and the others kept. A bad config file or env value makes that layer
    count for nothing (the problem says so); the init options still apply over the defaults.
    """
    options = dict(init_options)
    problems: list[str] = []
    skip_files = False
    for _ in range(len(options) + 3):
        try:
            if skip_files:
                return _init_only(options, problems), problems
            return load_settings(workspace, options), problems
        except ConfigError as exc:
            if exc.source == INIT_SOURCE:
                dropped = [k for k in options if k == exc.key or _field(k) == exc.key]
                for k in dropped or list(options):
                    options.pop(k, None)
                problems.append(f"{exc}; the default is used")
            else:
                problems.append(f"{exc}; that configuration source is ignored")
                skip_files = True
    return Settings(), problems


def _init_only(options: dict[str, Any], problems: list[str]) -> Settings:
    settings = Settings()
    for key, value in options.items():
        if value is None:
            continue
        try:
            settings = merge(settings, {key: value}, INIT_SOURCE)
        except ConfigError as exc:
            problems.append(f"{exc}; the default is used")
    return settings
