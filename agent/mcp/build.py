"""A session's ``McpManager`` from every source, and the status updates it sends to the editor."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from .. import events
from .connection import ServerConnection
from .launch import kept_from_workspace
from .manager import McpManager
from .sources import configured
from .spec import ServerSpec, layered, parse_servers, with_cwd
from ..tools.registry import ToolRegistry
from ..types import SessionUpdate

log = logging.getLogger("agentls.mcp")

# (raw mcpServers as the editor sent them, where they came from), lowest precedence first
Layer = tuple[Any, str]


def session_specs(workspace: Path, *, trusted: bool, layers: Sequence[Layer] = ()
                  ) -> tuple[list[ServerSpec], list[str]]:
    from ..config import user_config_path

    specs, problems = configured(workspace, user_config_path(), trusted=trusted)
    stack = [specs]
    for raw, source in layers:
        found, bad = parse_servers(raw, source)
        stack.append(found)
        problems += bad
    return [kept_from_workspace(with_cwd(s, str(workspace)), str(workspace)) for s in layered(*stack)], problems


def build_manager(registry: ToolRegistry, workspace: Path, *, trusted: bool, layers: Sequence[Layer] = ()
                  ) -> McpManager:
    specs, problems = session_specs(workspace, trusted=trusted, layers=layers)
    for problem in problems:
        log.warning("%s", problem)
    return McpManager(specs, registry, problems=problems, roots=[str(workspace)])


def status_update(manager: McpManager) -> SessionUpdate:
    """``session_info_update`` with ``_meta.agentls.mcpServers``: each server's state, tools and last error."""
    return events.session_info(meta={"mcpServers": manager.status()})


def report_to(manager: McpManager, send: Callable[[SessionUpdate], Awaitable[None]]) -> None:
    """Send the status to the editor whenever a server's state or lists change."""
    tasks: set[asyncio.Task[None]] = set()

    async def deliver() -> None:
        try:
            await send(status_update(manager))
        except Exception:  # a client that cannot take the update must not break the servers
            log.exception("sending the MCP status failed")

    def listener(what: str, conn: ServerConnection | None) -> None:
        if manager.closed:
            return
        task = asyncio.ensure_future(deliver())
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    manager.listeners.append(listener)
