"""MCP on the LSP face: ``agent/listMcpServers``, MCP prompts as ``/commands`` in ``agent/turn``, resource
@-mentions, and ``available_commands_update`` (over ``agent/update``) when the servers' prompts change.
The servers themselves are the runtime's (server/runtime/mcp.py)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from .params import Params

if TYPE_CHECKING:
    from .server import AgentServer
    from ..runtime.live import LiveSession

_COMMAND = re.compile(r"^/([A-Za-z0-9_.:-]+)(?:\s+(.*))?$", re.DOTALL)


async def list_servers(ls: AgentServer, raw: Any, where: str = "agent/listMcpServers") -> dict[str, Any]:
    from agentls.agent.mcp.report import listing
    from . import lookup

    p = Params(where, raw)
    session = await lookup.session(ls, p.session_id(), where)  # a stored one is opened (its servers start)
    return listing(session.mcp)


def commands_update(session: LiveSession) -> dict[str, Any]:
    """The session's command files and skills (docs/workflows.md), then its MCP servers' prompts."""
    from agentls.agent.mcp.prompts import commands

    files = list(session.agent.workflows.commands.values()) if session.agent and session.agent.workflows else []
    listed = [c.available() for c in files]
    listed += [c.available() for c in commands(session.mcp, {c.name for c in files})]
    return {"sessionUpdate": "available_commands_update", "availableCommands": listed}


def watch(ls: AgentServer, session: LiveSession) -> None:
    """Once per session: a server that failed is said at once (the session's notices, as a warning), and a
    client that takes updates hears of the slash commands (the MCP prompts) as they change."""
    manager = session.mcp
    if manager is None or any(getattr(f, "lsp_watch", False) for f in manager.listeners):
        return

    def changed(what: str, conn: object) -> None:
        if session.closed:
            return
        if what == "failed":
            notices, session.notices = session.notices, []
            ls.show_notices(notices)
        if what in ("ready", "prompts", "crashed", "failed", "stopped") and ls.features.updates:
            ls.notify("agent/update", {"sessionId": session.session_id, "update": commands_update(session)})

    changed.lsp_watch = True  # type: ignore[attr-defined]
    manager.listeners.append(changed)


async def prepare(session: LiveSession, prompt: Any, where: str) -> Any:
    """The turn's prompt: an MCP prompt's messages for ``/<prompt> args``, mentioned resources embedded."""
    from agentls.agent.mcp import mentions
    from agentls.agent.mcp.connection import Unavailable, describe_error
    from agentls.agent.mcp.prompts import PromptArgumentError, expand, find

    manager = session.mcp
    if manager is None or not manager.connections:
        return prompt
    blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else list(prompt)
    first = blocks[0] if blocks and isinstance(blocks[0], dict) and blocks[0].get("type") == "text" else None
    match = _COMMAND.match(str(first.get("text", "")).strip()) if first is not None else None
    files = session.agent.workflows if session.agent is not None else None  # a command file hides an MCP prompt
    command = find(manager, match.group(1), set(files.commands) if files else set()) if match is not None else None
    if match is not None and command is not None:
        try:
            return await expand(manager, command, match.group(2) or "")
        except (PromptArgumentError, Unavailable) as exc:
            raise JsonRpcInvalidParams(f"{where}: {exc}") from None
        except Exception as exc:
            raise JsonRpcInvalidParams(f"{where}: /{command.name}: the MCP server {command.server!r} could not give "
                                       f"the prompt: {describe_error(exc)}") from None
    expanded = await mentions.expand(manager, blocks)
    return prompt if expanded is blocks else expanded
