"""The configured MCP servers of a workspace: user config, then the workspace's files when trusted.

Layers, a later one replacing a server of the same name: the user config's ``[mcp_servers.NAME]`` <
the project's ``.mcp.json`` < the workspace ``.agentls.toml``'s ``[mcp_servers.NAME]`` < what the editor
passes (LSP ``initializationOptions.mcpServers``, then the session's own ``mcpServers``). The two
workspace files start processes, so they count only when the user trusts workspace configuration
(``trust_workspace_config = true`` in the user config); otherwise they are ignored with a warning.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .spec import ServerSpec, layered, parse_servers

KEYS = ("mcp_servers", "mcpServers")
MAX_FILE_BYTES = 1_000_000


def _read(path: Path) -> tuple[str | None, str | None]:
    """The text of a small regular file, or a problem. A FIFO or a device is never opened (agent/fileio.py)."""
    from ..fileio import NotRegularFile, read_small

    try:
        return read_small(path, MAX_FILE_BYTES).decode("utf-8"), None
    except FileNotFoundError:
        return None, None
    except NotRegularFile as exc:
        return None, f"{path}: is {exc.kind}, not a regular file; its MCP servers are ignored"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path}: could not be read ({exc}); its MCP servers are ignored"


def _toml_servers(path: Path) -> tuple[Any, str | None]:
    """The ``mcp_servers`` table of a TOML file (top level or under ``[agentls]``), or a problem."""
    text, problem = _read(path)
    if text is None:
        return None, problem
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return None, f"{path}: could not be read ({exc}); its MCP servers are ignored"
    for table in (data, data.get("agentls")):
        if isinstance(table, Mapping):
            for key in KEYS:
                if key in table:
                    return table[key], None
    return None, None


def _json_servers(path: Path) -> tuple[Any, str | None]:
    """``mcpServers`` of a ``.mcp.json`` (Claude Code's project file)."""
    text, problem = _read(path)
    if text is None:
        return None, problem
    try:
        data = json.loads(text)
    except ValueError as exc:
        return None, f"{path}: could not be read ({exc}); its MCP servers are ignored"
    if not isinstance(data, Mapping):
        return None, f"{path}: must hold a JSON object with 'mcpServers'; ignored"
    return data.get("mcpServers"), None


def configured(workspace: Path | None, user_config: Path, *, trusted: bool
               ) -> tuple[list[ServerSpec], list[str]]:
    """The servers from the configuration files and the problems met (each names its file)."""
    problems: list[str] = []
    layers: list[list[ServerSpec]] = []
    raw, problem = _toml_servers(user_config)
    problems += [problem] if problem else []
    specs, found = parse_servers(raw, str(user_config), expand_vars=True)
    layers.append(specs)
    problems += found
    if workspace is None:
        return layered(*layers), problems
    ignored = []
    for path, reader in ((workspace / ".mcp.json", _json_servers), (workspace / ".agentls.toml", _toml_servers)):
        raw, problem = reader(path)
        if problem:
            problems.append(problem)
        if raw is None:
            continue
        if not trusted:
            names = sorted(raw) if isinstance(raw, Mapping) else []
            ignored.append(f"{path} ({', '.join(names) or 'its servers'})")
            continue
        specs, found = parse_servers(raw, str(path), expand_vars=True)
        layers.append(specs)
        problems += found
    if ignored:
        problems.append(f"MCP servers of an untrusted workspace were not started: {'; '.join(ignored)}. A workspace "
                        f"file could run any program; to allow it, set trust_workspace_config = true in your user "
                        f"config ({user_config}) or configure the servers there")
    return layered(*layers), problems
