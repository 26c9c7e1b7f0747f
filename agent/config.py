"""Settings, merged from every layer: init options > workspace ``.agentls.toml`` > user config > env.

A bad value raises ``ConfigError`` naming the key and where it came from. API keys are read from
the environment only (the config names the variable, ``apiKeyEnv``); they are never stored.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from agentls.agent.sandbox.policy import DEFAULT_WRITABLE, MODES, NETWORK, loosens

APPROVAL_MODES = ("ask", "auto-edit", "yolo")
PROVIDERS = ("openai", "anthropic", "openai-responses", "local")
TOOL_MODES = ("native", "json")
DEFAULT_MODELS = {"openai": "gpt-4.1-mini", "anthropic": "claude-sonnet-4-5", "openai-responses": "gpt-5-mini"}
DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com",
                     "openai-responses": "https://api.openai.com/v1"}
KEY_ENV_FALLBACKS = {"openai": ("AGENTLS_API_KEY", "OPENAI_API_KEY"),
                     "anthropic": ("AGENTLS_API_KEY", "ANTHROPIC_API_KEY"),
                     "openai-responses": ("AGENTLS_API_KEY", "OPENAI_API_KEY"), "local": ()}


class ConfigError(ValueError):
    def __init__(self, key: str, source: str, problem: str) -> None:
        super().__init__(f"{source}: setting {key!r} {problem}")
        self.key = key
        self.source = source
        self.problem = problem


@dataclass(frozen=True)
class Settings:
    model: str | None = None
    base_url: str | None = None
    provider: str | None = None
    api_key_env: str | None = None
    fallback_models: tuple[str, ...] = ()
    max_iterations: int = 90
    context_window: int | None = None
    compression_threshold: float = 0.5
    approval: str = "ask"
    tool_mode: str | None = None
    stream: bool = True
    aux_model: str | None = None
    titles: str = "model"  # "model": the auxiliary model names the session; "prompt": first line of the prompt
    request_timeout: float = 120.0
    max_retries: int = 3
    max_tokens: int | None = None
    temperature: float | None = None
    thinking_budget: int | None = None  # Anthropic extended thinking: tokens the model may think (>= 1024)
    terminal_timeout: float = 120.0
    tool_output_limit: int | None = None
    allow_dangerous: bool = False
    trajectory_path: str | None = None
    session_db: str | None = None
    trust_workspace_config: bool = False
    sandbox: str = "auto"  # auto | strict | off: the OS sandbox for the commands agentls runs (agent/sandbox)
    sandbox_network: str = "off"  # off | on
    sandbox_writable: tuple[str, ...] = DEFAULT_WRITABLE  # writable besides the workspace and /tmp
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def api_key(self) -> str | None:
        """The key from the environment, never stored: ``apiKeyEnv`` first, then the usual names."""
        names = [self.api_key_env] if self.api_key_env else []
        names += list(KEY_ENV_FALLBACKS.get(self.resolved_provider(), ("AGENTLS_API_KEY",)))
        for name in names:
            value = os.environ.get(name) if name else None
            if value:
                return value
        return None

    def resolved_provider(self) -> str:
        if self.model and (self.model == "local" or self.model.startswith("local:")):
            return "local"
        return self.provider or "openai"


# camelCase (init options, TOML) and snake_case names both map to the dataclass field.
_ALIASES = {
    "baseUrl": "base_url", "apiKeyEnv": "api_key_env", "fallbackModels": "fallback_models",
    "maxIterations": "max_iterations", "contextWindow": "context_window",
    "compressionThreshold": "compression_threshold", "toolMode": "tool_mode", "auxModel": "aux_model",
    "requestTimeout": "request_timeout", "maxRetries": "max_retries", "maxTokens": "max_tokens",
    "thinkingBudget": "thinking_budget",
    "terminalTimeout": "terminal_timeout", "toolOutputLimit": "tool_output_limit",
    "allowDangerous": "allow_dangerous", "trajectoryPath": "trajectory_path", "sessionDb": "session_db",
    "trustWorkspaceConfig": "trust_workspace_config", "sandboxNetwork": "sandbox_network",
    "sandboxWritable": "sandbox_writable",
}
SANDBOX_KEYS = frozenset({"sandbox", "sandbox_network", "sandbox_writable"})
# A cloned repository's .agentls.toml must not be able to loosen approval, send the API key to another
# host, or write files elsewhere. These need the user's own config (or trust_workspace_config = true).
WORKSPACE_SENSITIVE = frozenset({"base_url", "api_key_env", "provider", "allow_dangerous", "trajectory_path",
                                 "session_db", "trust_workspace_config"})
_STRICTNESS = {"yolo": 0, "auto-edit": 1, "ask": 2}
_FIELDS = {f.name: f for f in fields(Settings) if f.name not in ("sources", "warnings")}
_ENV = {
    "AGENTLS_MODEL": "model", "AGENTLS_BASE_URL": "base_url", "AGENTLS_PROVIDER": "provider",
    "AGENTLS_API_KEY_ENV": "api_key_env", "AGENTLS_FALLBACK_MODELS": "fallback_models",
    "AGENTLS_MAX_ITERATIONS": "max_iterations", "AGENTLS_CONTEXT_WINDOW": "context_window",
    "AGENTLS_APPROVAL": "approval", "AGENTLS_TOOL_MODE": "tool_mode", "AGENTLS_AUX_MODEL": "aux_model",
    "AGENTLS_STREAM": "stream", "AGENTLS_SESSION_DB": "session_db", "AGENTLS_TITLES": "titles",
    "AGENTLS_THINKING_BUDGET": "thinking_budget",
    "AGENTLS_SANDBOX": "sandbox", "AGENTLS_SANDBOX_NETWORK": "sandbox_network",
}


def _coerce(name: str, value: Any, source: str) -> Any:
    kind = _FIELDS[name].type
    try:
        if value is None:
            return None
        if name == "sandbox_network" and isinstance(value, bool):
            return "on" if value else "off"
        if "tuple" in str(kind):
            items = value.split(",") if isinstance(value, str) else value
            if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
                raise TypeError("must be a list of strings")
            return tuple(i.strip() for i in items if i.strip())
        if "bool" in str(kind):
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
                return value.lower() in ("1", "true", "yes", "on")
            raise TypeError("must be true or false")
        if "float" in str(kind):
            if isinstance(value, bool):
                raise TypeError("must be a number")
            return float(value)
        if "int" in str(kind):
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise TypeError("must be a whole number")
            return int(value)
        if not isinstance(value, str):
            raise TypeError("must be a string")
        return value
    except (TypeError, ValueError) as exc:
        raise ConfigError(name, source, f"has a bad value {value!r}: {exc}") from None


def _check(s: Settings) -> None:
    def bad(key: str, problem: str) -> ConfigError:
        return ConfigError(key, s.sources.get(key, "defaults"), problem)

    if s.approval not in APPROVAL_MODES:
        raise bad("approval", f"must be one of {', '.join(APPROVAL_MODES)}, not {s.approval!r}")
    if s.provider is not None and s.provider not in PROVIDERS:
        raise bad("provider", f"must be one of {', '.join(PROVIDERS)}, not {s.provider!r}")
    if s.tool_mode is not None and s.tool_mode not in TOOL_MODES:
        raise bad("tool_mode", f"must be one of {', '.join(TOOL_MODES)}, not {s.tool_mode!r}")
    if s.sandbox not in MODES:
        raise bad("sandbox", f"must be one of {', '.join(MODES)}, not {s.sandbox!r}")
    if s.sandbox_network not in NETWORK:
        raise bad("sandbox_network", f"must be 'off' or 'on', not {s.sandbox_network!r}")
    if s.titles not in ("model", "prompt"):
        raise bad("titles", "must be 'model' or 'prompt'")
    if s.max_iterations < 1:
        raise bad("max_iterations", "must be at least 1")
    if not 0.05 <= s.compression_threshold <= 0.95:
        raise bad("compression_threshold", "must be between 0.05 and 0.95")
    if s.thinking_budget is not None and s.thinking_budget < 1024:
        raise bad("thinking_budget", "must be at least 1024 tokens (the API's minimum)")
    if s.context_window is not None and s.context_window < 1024:
        raise bad("context_window", "must be at least 1024 tokens")
    for key in ("request_timeout", "terminal_timeout"):
        if getattr(s, key) <= 0:
            raise bad(key, "must be positive")
    if s.base_url is not None and not s.base_url.startswith(("http://", "https://")):
        raise bad("base_url", f"must be an http(s) URL, not {s.base_url!r}")


def merge(base: Settings, values: Mapping[str, Any], source: str) -> Settings:
    """``base`` with ``values`` (camelCase or snake_case keys) applied; unknown keys are errors."""
    changes: dict[str, Any] = {}
    sources = dict(base.sources)
    given: dict[str, str] = {}  # field -> the key as the user wrote it, for error messages
    for raw_key, value in values.items():
        key = _ALIASES.get(raw_key, raw_key.replace("-", "_"))
        if key not in _FIELDS:
            raise ConfigError(raw_key, source, "is not a known setting")
        try:
            changes[key] = _coerce(key, value, source)
        except ConfigError as exc:
            raise ConfigError(raw_key, source, exc.problem) from None
        sources[key] = source
        given[key] = raw_key
    result = replace(base, **changes, sources=sources, warnings=base.warnings)
    try:
        _check(result)
    except ConfigError as exc:
        raise ConfigError(given.get(exc.key, exc.key), exc.source, exc.problem) from None
    return result


def _untrusted(values: Mapping[str, Any], current: Settings, source: str) -> dict[str, Any]:
    """Workspace values minus what an untrusted repository may not set (each drop is a warning)."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for raw_key, value in values.items():
        key = _ALIASES.get(raw_key, raw_key.replace("-", "_"))
        if key in WORKSPACE_SENSITIVE:
            merge(current, {raw_key: value}, source)  # still report a bad value, naming key and file
            dropped.append(raw_key)
            continue
        if key == "approval" and isinstance(value, str) and \
                _STRICTNESS.get(value, 2) < _STRICTNESS.get(current.approval, 2):
            dropped.append(f"{raw_key} = {value!r} (less strict than {current.approval!r})")
            continue
        kept[raw_key] = value
    if dropped:
        note = (f"{source}: ignored {', '.join(dropped)}: a workspace file may not set these; put them in your user "
                f"config ({user_config_path()}) or set trust_workspace_config = true there")
        object.__setattr__(current, "warnings", (*current.warnings, note))
    return kept


def _sandbox_tightened(values: Mapping[str, Any], current: Settings, source: str) -> dict[str, Any]:
    """Workspace values minus any that would loosen the sandbox: a repository may tighten it, never
    loosen it, whatever ``trust_workspace_config`` says (each drop is a warning)."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for raw_key, value in values.items():
        key = _ALIASES.get(raw_key, raw_key.replace("-", "_"))
        if key in SANDBOX_KEYS:
            merge(current, {raw_key: value}, source)  # still report a bad value, naming key and file
            if loosens(key, _coerce(key, value, source), getattr(current, key)):
                dropped.append(f"{raw_key} = {value!r}")
                continue
        kept[raw_key] = value
    if dropped:
        note = (f"{source}: ignored {', '.join(dropped)}: a workspace file may tighten the sandbox, never loosen it; "
                f"set these in your user config ({user_config_path()}) or the editor's settings")
        object.__setattr__(current, "warnings", (*current.warnings, note))
    return kept


def user_config_path() -> Path:
    override = os.environ.get("AGENTLS_CONFIG")
    if override:
        return Path(override)
    from platformdirs import user_config_dir

    return Path(user_config_dir("agentls")) / "config.toml"


def _read_toml(path: Path) -> dict[str, Any]:
    # A regular file of at most 1 MiB: a FIFO or a device named .agentls.toml is refused, never opened
    # (an open of a FIFO blocks until a writer comes: the server would be deaf for good).
    from agentls.agent.fileio import NotRegularFile, read_small

    try:
        data = tomllib.loads(read_small(path, 1024 * 1024).decode("utf-8"))
    except FileNotFoundError:
        return {}
    except NotRegularFile as exc:
        raise ConfigError("(file)", str(path), f"is {exc.kind}, not a regular file; it was not read") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError("(file)", str(path), f"could not be read: {exc}") from None
    section = data.get("agentls", data)
    return dict(section) if isinstance(section, dict) else {}


def load_settings(workspace: Path | None = None, overrides: Mapping[str, Any] | None = None,
                  *, environ: Mapping[str, str] | None = None) -> Settings:
    """All layers merged. Regular-file reads of two small TOML files happen synchronously at startup."""
    env = os.environ if environ is None else environ
    settings = Settings()
    from_env = {field_name: env[var] for var, field_name in _ENV.items() if env.get(var)}
    settings = merge(settings, from_env, "environment")
    settings = merge(settings, _read_toml(user_config_path()), str(user_config_path()))
    if workspace is not None:
        ws_file = workspace / ".agentls.toml"
        ws_values = _sandbox_tightened(_read_toml(ws_file), settings, str(ws_file))
        if not settings.trust_workspace_config:
            ws_values = _untrusted(ws_values, settings, str(ws_file))
        settings = merge(settings, ws_values, str(ws_file))
    if overrides:
        settings = merge(settings, {k: v for k, v in overrides.items() if v is not None}, "initializationOptions")
    return settings
