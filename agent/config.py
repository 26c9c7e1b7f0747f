"""Settings, merged from every layer: init options > workspace ``.agentls.toml`` > user config > env.

A bad value raises ``ConfigError`` naming the key as the user wrote it, where it came from, what it must
be and the default; ``errors=[...]`` instead applies every valid key and collects the errors of the rest
(the faces report them and go on). API keys are read from the environment only (the config names the
variable, ``apiKeyEnv``); they are never stored.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .config_values import URL, BadValue, Fields, choice, describe, number, switch
from .local import is_local_model
from .sandbox.policy import DEFAULT_WRITABLE, MODES, SandboxConfig, loosens

APPROVAL_MODES = ("ask", "auto-edit", "yolo")
PROVIDERS = ("openai", "anthropic", "openai-responses", "local")
TOOL_MODES = ("native", "json")
DEFAULT_MODELS = {"openai": "gpt-4.1-mini", "anthropic": "claude-sonnet-4-5", "openai-responses": "gpt-5-mini"}
DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com",
                     "openai-responses": "https://api.openai.com/v1"}
KEY_ENV_FALLBACKS = {"openai": ("AGENTLS_API_KEY", "OPENAI_API_KEY"),
                     "anthropic": ("AGENTLS_API_KEY", "ANTHROPIC_API_KEY"),
                     "openai-responses": ("AGENTLS_API_KEY", "OPENAI_API_KEY"), "local": ()}
DAY = 86_400.0


class ConfigError(ValueError):
    def __init__(self, key: str, source: str, problem: str, *, outcome: str | None = None) -> None:
        super().__init__(f"{source}: setting {key!r} {problem}" + (f"; {outcome}" if outcome else ""))
        self.key = key
        self.source = source
        self.problem = problem


@dataclass(frozen=True)
class Settings:
    model: str | None = None
    base_url: str | None = field(default=None, metadata=URL)
    provider: str | None = field(default=None, metadata=choice(*PROVIDERS))
    api_key_env: str | None = None
    fallback_models: tuple[str, ...] = ()
    max_iterations: int = field(default=90, metadata=number(1, 10_000, "model calls"))
    context_window: int | None = field(default=None, metadata=number(1024, 100_000_000, "tokens"))
    compression_threshold: float = field(default=0.5, metadata=number(0.05, 0.95))
    approval: str = field(default="ask", metadata=choice(*APPROVAL_MODES))
    tool_mode: str | None = field(default=None, metadata=choice(*TOOL_MODES))
    # A small model (compact prompt and tool schemas, Python edits checked): None means only the embedded one
    small_model: bool | None = None
    # A small model's change request of one file: the agent makes its first edit (docs/loop.md §9.10)
    first_edit: bool = True
    # ... and when the file's tests sit beside it, the agent runs them after the edit and repairs what fails (§9.11)
    check_tests: bool = True
    stream: bool = True
    aux_model: str | None = None
    # "model": the auxiliary model names the session; "prompt": first line of the prompt
    titles: str = field(default="model", metadata=choice("model", "prompt"))
    request_timeout: float = field(default=120.0, metadata=number(0.1, DAY, "seconds"))
    max_retries: int = field(default=3, metadata=number(0, 100))
    max_tokens: int | None = field(default=None, metadata=number(1, 10_000_000, "tokens"))
    temperature: float | None = field(default=None, metadata=number(0, 2))
    # Anthropic extended thinking: tokens the model may think (the API's minimum is 1024)
    thinking_budget: int | None = field(default=None, metadata=number(1024, 10_000_000, "tokens"))
    terminal_timeout: float = field(default=120.0, metadata=number(0.1, DAY, "seconds"))
    tool_output_limit: int | None = field(default=None, metadata=number(100, 100_000_000, "characters"))
    allow_dangerous: bool = False
    # delegate_task (docs/loop.md §9.9): children running at once, how deep they may delegate, the small model
    delegate_concurrency: int = field(default=3, metadata=number(1, 16, "subagents"))
    delegate_depth: int = field(default=1, metadata=number(1, 2))
    delegate_small_model: bool = False
    trajectory_path: str | None = None
    session_db: str | None = None
    trust_workspace_config: bool = False
    # The OS sandbox for the commands agentls runs itself (agent/sandbox): auto | strict | off
    sandbox: str = field(default="auto", metadata=choice(*MODES))
    sandbox_network: str = field(default="off", metadata=switch())  # off | on (true/false accepted)
    sandbox_writable: tuple[str, ...] = DEFAULT_WRITABLE  # writable besides the workspace and /tmp
    # "model=input/output" in USD per million tokens, over agent/pricing.py's table (the session's cost)
    prices: tuple[str, ...] = ()
    # Set by the program only, never by a file or the environment (PROGRAM_ONLY). The key itself is read from
    # the environment by agent/resolve.py (``environment_key``), or given by a program; never stored
    api_key: str | None = field(default=None, repr=False)
    system_message: str | None = None  # the caller's own text, after the built-in system prompt
    # Seconds the embedded model's server stays loaded after the last run using it ended, detached, so the next
    # run answers at once (agent/local/keeper.py); 0: it ends with the process
    local_keep_alive: float = field(default=300.0, metadata=number(0, DAY, "seconds"))
    local_model_path: str | Path | None = None  # the embedded model's GGUF file; None: the one installed
    retry_base_delay: float = field(default=1.0, metadata=number(0, 3600, "seconds"))
    retry_max_delay: float = field(default=30.0, metadata=number(0, 3600, "seconds"))
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def environment_key(self) -> str | None:
        """The key from the environment, never stored: ``apiKeyEnv`` first, then the usual names."""
        names = [self.api_key_env] if self.api_key_env else []
        names += list(KEY_ENV_FALLBACKS.get(self.resolved_provider(), ("AGENTLS_API_KEY",)))
        for name in names:
            value = os.environ.get(name) if name else None
            if value:
                return value
        return None

    def resolved_provider(self) -> str:
        if is_local_model(self.model):
            return "local"
        return self.provider or "openai"

    def evolve(self, *, source: str = "evolve", **changes: Any) -> Settings:
        """These settings with ``changes``, each checked as a user's value is: a bad one raises ``ConfigError``
        naming the key and ``source``. A child agent's are its parent's evolved (docs/architecture.md)."""
        program = {k: v for k, v in changes.items() if k in PROGRAM_ONLY}
        users = {k: v for k, v in changes.items() if k not in PROGRAM_ONLY}
        evolved = merge(self, users, source) if users else self
        return replace(evolved, **program) if program else evolved


# Settings a program gives (AIAgent's keyword arguments, ``evolve``); a file or the environment cannot.
PROGRAM_ONLY = frozenset({"api_key", "system_message", "local_model_path", "retry_base_delay", "retry_max_delay"})
SETTINGS = Fields(Settings, exclude=("sources", "warnings", *PROGRAM_ONLY))
# An agent built from keyword arguments (a program's) titles a session from its first prompt: no model call
# the program did not ask for. From the user's settings, the default is the field's.
KEYWORD_DEFAULTS = Settings(titles="prompt")
_KEYWORDS = frozenset(f.name for f in fields(Settings)) - {"sources", "warnings"}


def with_keywords(base: Settings, options: Mapping[str, Any]) -> Settings:
    """``base`` with ``AIAgent``'s keyword arguments applied, taken as the program gave them (unchecked, as a
    program's own values always were); a ``SandboxConfig`` becomes the three sandbox settings."""
    changes: dict[str, Any] = {}
    for name, value in options.items():
        if name == "sandbox" and isinstance(value, SandboxConfig):
            changes.update(sandbox=value.mode, sandbox_network="on" if value.network else "off",
                           sandbox_writable=tuple(value.writable))
            continue
        if name not in _KEYWORDS:
            raise TypeError(f"AIAgent() got an unexpected keyword argument {name!r}")
        if name == "trajectory_path" and value is not None:
            value = str(value)
        changes[name] = tuple(value) if name in ("fallback_models", "sandbox_writable") else value
    return replace(base, **changes) if changes else base
# Every setting has an environment variable: AGENTLS_ and its snake_case name in capitals.
ENVIRONMENT = {f"AGENTLS_{name.upper()}": name for name in SETTINGS.fields}
# A cloned repository's .agentls.toml must not be able to loosen approval, send the API key to another
# host, or write files elsewhere. These need the user's own config (or trust_workspace_config = true).
WORKSPACE_SENSITIVE = frozenset({"base_url", "api_key_env", "provider", "allow_dangerous", "trajectory_path",
                                 "session_db", "trust_workspace_config"})
_STRICTNESS = {"yolo": 0, "auto-edit": 1, "ask": 2}
SANDBOX_KEYS = frozenset({"sandbox", "sandbox_network", "sandbox_writable"})
# MCP servers are configured in the same files but read by agent/mcp/sources.py (with its own workspace trust
# rule), not merged here.
MCP_KEYS = frozenset({"mcp_servers", "mcpServers"})


def _check(base: Settings, key: Any, value: Any, source: str, errors: list[ConfigError] | None,
           aliases: Mapping[str, str] | None = None) -> tuple[str, Any] | None:
    """(field, value converted) for one key; None when the key or the value is bad (and the error, raised
    when ``errors`` is None, is collected there)."""
    name = (aliases or {}).get(key) or (SETTINGS.name(key) if isinstance(key, str) else None)
    try:
        if name is None:
            raise BadValue("is not a known setting" + (SETTINGS.suggest(key) if isinstance(key, str) else ""))
        return name, SETTINGS.convert(name, value)
    except BadValue as exc:
        if name is None:
            kept = "it is ignored"
        elif name in base.sources:
            kept = f"{describe(getattr(base, name))} from {base.sources[name]} is used instead"
        else:
            kept = "the default is used"
        error = ConfigError(str(key), source, str(exc), outcome=kept if errors is not None else None)
        if errors is None:
            raise error from None
        errors.append(error)
        return None


def merge(base: Settings, values: Mapping[str, Any], source: str, *, errors: list[ConfigError] | None = None,
          aliases: Mapping[str, str] | None = None) -> Settings:
    """``base`` with ``values`` (camelCase, snake_case or kebab-case keys, or ``aliases``) applied. A bad key or
    value raises ``ConfigError``; with ``errors`` given, it is appended there and the key keeps ``base``'s value."""
    changes: dict[str, Any] = {}
    sources = dict(base.sources)
    for key, value in values.items():
        if key in MCP_KEYS or key == "hooks":  # hooks: agent/workflows/hook_config.py
            continue
        checked = _check(base, key, value, source, errors, aliases)
        if checked is not None:
            changes[checked[0]] = checked[1]
            sources[checked[0]] = source
    return replace(base, **changes, sources=sources, warnings=base.warnings)


def _untrusted(values: Mapping[str, Any], current: Settings, source: str,
               errors: list[ConfigError] | None) -> dict[str, Any]:
    """Workspace values minus what an untrusted repository may not set (each drop is a warning)."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in values.items():
        name = SETTINGS.name(key)
        if name in WORKSPACE_SENSITIVE:
            if _check(current, key, value, source, errors) is not None:  # a bad value is still reported
                dropped.append(key)
            continue
        if name == "approval" and isinstance(value, str) and \
                _STRICTNESS.get(value, 2) < _STRICTNESS.get(current.approval, 2):
            dropped.append(f"{key} = {value!r} (less strict than {current.approval!r})")
            continue
        kept[key] = value
    _warn_ignored(current, source, dropped, f"a workspace file may not set these; put them in your user config "
                  f"({user_config_path()}) or set trust_workspace_config = true there")
    return kept


def _warn_ignored(current: Settings, source: str, dropped: list[str], why: str) -> None:
    """One warning on ``current`` for the workspace values that were dropped, saying why."""
    if dropped:
        note = f"{source}: ignored {', '.join(dropped)}: {why}"
        object.__setattr__(current, "warnings", (*current.warnings, note))


def _sandbox_tightened(values: Mapping[str, Any], current: Settings, source: str,
                       errors: list[ConfigError] | None) -> dict[str, Any]:
    """Workspace values minus any that would loosen the sandbox: a repository may tighten it, never
    loosen it, whatever ``trust_workspace_config`` says (each drop is a warning)."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in values.items():
        name = SETTINGS.name(key)
        if name in SANDBOX_KEYS:
            checked = _check(current, key, value, source, errors)  # a bad value is still reported
            if checked is None:
                continue
            if loosens(checked[0], checked[1], getattr(current, checked[0])):
                dropped.append(f"{key} = {value!r}")
                continue
        kept[key] = value
    _warn_ignored(current, source, dropped, f"a workspace file may tighten the sandbox, never loosen it; set these "
                  f"in your user config ({user_config_path()}) or the editor's settings")
    return kept


def user_config_path() -> Path:
    override = os.environ.get("AGENTLS_CONFIG")
    if override:
        return Path(override)
    from platformdirs import user_config_dir

    return Path(user_config_dir("agentls")) / "config.toml"


def _read_toml(path: Path, errors: list[ConfigError] | None) -> dict[str, Any]:
    # A regular file of at most 1 MiB: a FIFO or a device named .agentls.toml is refused, never opened
    # (an open of a FIFO blocks until a writer comes: the server would be deaf for good).
    from .fileio import NotRegularFile, read_small

    problem, outcome = None, None
    try:
        data = tomllib.loads(read_small(path, 1024 * 1024).decode("utf-8"))
    except FileNotFoundError:
        return {}
    except NotRegularFile as exc:
        problem = f"is {exc.kind}, not a regular file; it was not read"
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError, ValueError, RecursionError) as exc:
        problem, outcome = f"could not be read: {exc}", "the file is ignored"
    if problem is not None:
        error = ConfigError("(file)", str(path), problem, outcome=outcome if errors is not None else None)
        if errors is None:
            raise error from None
        errors.append(error)
        return {}
    section = data.get("agentls", data)
    return dict(section) if isinstance(section, dict) else {}


def load_settings(workspace: Path | None = None, overrides: Mapping[str, Any] | None = None,
                  *, environ: Mapping[str, str] | None = None, errors: list[ConfigError] | None = None,
                  overrides_source: str = "initializationOptions") -> Settings:
    """All layers merged. Regular-file reads of two small TOML files happen synchronously at startup.

    A bad value raises ``ConfigError``; with ``errors`` given, every valid key of every layer applies and
    the problems are appended there (a key with a bad value keeps the value of the layers below)."""
    env = os.environ if environ is None else environ
    settings = merge(Settings(), {var: env[var] for var in ENVIRONMENT if env.get(var)}, "environment",
                     errors=errors, aliases=ENVIRONMENT)
    settings = merge(settings, _read_toml(user_config_path(), errors), str(user_config_path()), errors=errors)
    if workspace is not None:
        ws_file = workspace / ".agentls.toml"
        ws_values = _sandbox_tightened(_read_toml(ws_file, errors), settings, str(ws_file), errors)
        if not settings.trust_workspace_config:
            ws_values = _untrusted(ws_values, settings, str(ws_file), errors)
        settings = merge(settings, ws_values, str(ws_file), errors=errors)
    if overrides:
        settings = merge(settings, {k: v for k, v in overrides.items() if v is not None}, overrides_source,
                         errors=errors)
    return settings
