"""``ServerSpec``: one MCP server as configured, whatever the source.

Every source (ACP ``mcpServers``, LSP ``initializationOptions.mcpServers`` and ``agent/newSession``, the
TOML ``[mcp_servers.NAME]`` tables, a project's ``.mcp.json``) is parsed into this one type. An entry
that cannot be used is a problem (a message naming the source and the server), never an exception.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

Transport = Literal["stdio", "http", "sse"]

DEFAULT_START_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 300.0
DEFAULT_MAX_LINE_BYTES = 16 << 20  # one stdio message (agent/mcp/stdio.py); a longer one fails its call
_TRANSPORTS: dict[str, Transport] = {"stdio": "stdio", "http": "http", "streamable-http": "http",
                                     "streamable_http": "http", "streamablehttp": "http", "sse": "sse"}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class SpecError(ValueError):
    """An entry that cannot be used; the message names the source and the server."""


@dataclass(frozen=True)
class ServerSpec:
    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    source: str = ""
    start_timeout: float = DEFAULT_START_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def describe(self) -> str:
        """What runs, for messages: the command line or the URL (header values never shown)."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args]).strip()
        return f"{self.transport} {self.url}"


def expand(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``${VAR}`` and ``${VAR:-default}`` from the environment (``.mcp.json``'s expansion)."""
    env = os.environ if environ is None else environ

    def one(match: re.Match[str]) -> str:
        value = env.get(match.group(1))
        if value:
            return value
        return match.group(2) if match.group(2) is not None else ""

    return _VAR.sub(one, text)


def _pairs(value: Any, what: str, where: str) -> tuple[tuple[str, str], ...]:
    """``{"K": "v"}`` or ``[{"name": "K", "value": "v"}]`` (ACP's form) as pairs."""
    if value is None:
        return ()
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, list):
        pairs = []
        for item in value:
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                raise SpecError(f"{where}: each of '{what}' must be an object with 'name' and 'value'")
            pairs.append((item["name"], item.get("value")))
        items = pairs
    else:
        raise SpecError(f"{where}: '{what}' must be an object (or a list of {{name, value}})")
    out = []
    for key, item in items:
        if not isinstance(key, str) or not key:
            raise SpecError(f"{where}: '{what}' has an empty or non-text name")
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise SpecError(f"{where}: '{what}.{key}' must be text, not {type(item).__name__}")
        out.append((key, str(item)))
    return tuple(out)


def _seconds(raw: Mapping[str, Any], keys: tuple[str, ...], default: float, where: str) -> float:
    for key in keys:
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86_400:
            raise SpecError(f"{where}: '{key}' must be a positive number of seconds, not {value!r}")
        return float(value)
    return default


def parse_entry(name: Any, raw: Any, source: str, *, expand_vars: bool = False) -> ServerSpec:
    """One server entry: ``{command, args, env, cwd}`` (stdio) or ``{url, headers}`` with an optional
    ``type`` (``stdio``, ``http``/``streamable-http``, ``sse``); a ``url`` without a type is HTTP."""
    if not isinstance(name, str) or not name.strip():
        raise SpecError(f"{source}: an MCP server needs a non-empty 'name'")
    where = f"{source}: MCP server {name!r}"
    if not isinstance(raw, Mapping):
        raise SpecError(f"{where} must be an object, not {type(raw).__name__}")
    sub = (lambda s: expand(s)) if expand_vars else (lambda s: s)
    kind = raw.get("type", raw.get("transport"))
    if kind is not None and (not isinstance(kind, str) or kind.lower() not in _TRANSPORTS):
        raise SpecError(f"{where}: 'type' must be stdio, http or sse, not {kind!r}")
    transport: Transport = _TRANSPORTS[kind.lower()] if isinstance(kind, str) else \
        ("http" if raw.get("url") is not None and raw.get("command") is None else "stdio")
    start_timeout = _seconds(raw, ("startup_timeout_sec", "startTimeout", "start_timeout"), DEFAULT_START_TIMEOUT,
                             where)
    call_timeout = _seconds(raw, ("tool_timeout_sec", "toolTimeout", "call_timeout", "timeout"), DEFAULT_CALL_TIMEOUT,
                            where)
    known = {"name", "type", "transport", "command", "args", "env", "cwd", "url", "headers", "_meta",
             "startup_timeout_sec", "startTimeout", "start_timeout", "tool_timeout_sec", "toolTimeout",
             "call_timeout", "timeout", "enabled", "disabled", "max_line_bytes", "maxLineBytes"}
    extra = {k: v for k, v in raw.items() if k not in known}
    max_line = raw.get("max_line_bytes", raw.get("maxLineBytes", DEFAULT_MAX_LINE_BYTES))
    if isinstance(max_line, bool) or not isinstance(max_line, int) or not 1024 <= max_line <= 1 << 30:
        raise SpecError(f"{where}: 'max_line_bytes' must be a whole number of bytes from 1024 to 1 GiB, "
                        f"not {max_line!r}")
    if transport == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            raise SpecError(f"{where}: a stdio server needs a 'command'")
        args = raw.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str | int | float) and not isinstance(a, bool)
                                                 for a in args):
            raise SpecError(f"{where}: 'args' must be a list of strings")
        cwd = raw.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise SpecError(f"{where}: 'cwd' must be a path")
        env = tuple((k, sub(v)) for k, v in _pairs(raw.get("env"), "env", where))
        return ServerSpec(name=name, transport="stdio", command=sub(command), args=tuple(sub(str(a)) for a in args),
                          env=env, cwd=sub(cwd) if cwd else None, source=source, extra=extra,
                          start_timeout=start_timeout, call_timeout=call_timeout, max_line_bytes=max_line)
    url = raw.get("url")
    if not isinstance(url, str) or not sub(url).startswith(("http://", "https://")):
        raise SpecError(f"{where}: an {transport} server needs an http(s) 'url', not {url!r}")
    headers = tuple((k, sub(v)) for k, v in _pairs(raw.get("headers"), "headers", where))
    return ServerSpec(name=name, transport=transport, url=sub(url), headers=headers, source=source, extra=extra,
                      start_timeout=start_timeout, call_timeout=call_timeout)


def _disabled(raw: Any) -> bool:
    return isinstance(raw, Mapping) and (raw.get("enabled") is False or raw.get("disabled") is True)


def parse_servers(value: Any, source: str, *, expand_vars: bool = False
                  ) -> tuple[list[ServerSpec], list[str]]:
    """A list of entries with ``name`` (ACP) or a mapping ``{name: entry}`` (files, LSP): the usable
    servers and one problem message per unusable entry. Disabled entries (``enabled = false``) are
    left out silently; a later entry of the same name replaces an earlier one."""
    if value is None:
        return [], []
    entries: list[tuple[Any, Any]]
    if isinstance(value, Mapping):
        entries = list(value.items())
    elif isinstance(value, list):
        entries = [(e.get("name") if isinstance(e, Mapping) else None, e) for e in value]
    else:
        return [], [f"{source}: 'mcpServers' must be a list or an object, not {type(value).__name__}; ignored"]
    specs: dict[str, ServerSpec] = {}
    problems = []
    for name, raw in entries:
        if _disabled(raw):
            continue
        try:
            spec = parse_entry(name, raw, source, expand_vars=expand_vars)
        except SpecError as exc:
            problems.append(f"{exc}; this server is not started")
            continue
        specs.pop(spec.name, None)
        specs[spec.name] = spec
    return list(specs.values()), problems


def layered(*layers: Iterable[ServerSpec]) -> list[ServerSpec]:
    """The servers of every layer, a later layer's server replacing an earlier one of the same name."""
    out: dict[str, ServerSpec] = {}
    for layer in layers:
        for spec in layer:
            out.pop(spec.name, None)
            out[spec.name] = spec
    return list(out.values())


def with_cwd(spec: ServerSpec, root: str) -> ServerSpec:
    """A stdio server runs in the session's workspace unless its entry names a directory."""
    if spec.transport != "stdio":
        return spec
    if spec.cwd is None:
        return replace(spec, cwd=root)
    return replace(spec, cwd=os.path.join(root, os.path.expanduser(spec.cwd)))
