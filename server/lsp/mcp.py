"""MCP on the LSP face: ``agent/listMcpServers``, MCP prompts as ``/commands`` in ``agent/turn``, resource
@-mentions, and ``available_commands_update`` (over ``agent/update``) when the servers' prompts change."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from agentls.server.lsp.params import Params

if TYPE_CHECKING:
    from agentls.agent.mcp.manager import McpManager
    from agentls.server.lsp.server import AgentServer

_COMMAND = re.compile(r"^/([A-Za-z0-9_.:-]+)(?:\s+(.*))?$", re.DOTALL)


def _manager(ls: AgentServer, session_id: str) -> McpManager | None:
    return ls.sessions.mcp(session_id)


async def list_servers(ls: AgentServer, raw: Any, where: str = "agent/listMcpServers") -> dict[str, Any]:
    from agentls.agent.mcp.report import listing

    p = Params(where, raw)
    session_id = p.session_id()
    if not ls.sessions.known(session_id):
        await ls.sessions.get(session_id, where)  # a stored session: loaded (and its servers started), or -32602
    return listing(_manager(ls, session_id))


def commands_update(manager: McpManager | None) -> dict[str, Any]:
    from agentls.agent.mcp.prompts import commands

    return {"sessionUpdate": "available_commands_update",
            "availableCommands": [c.available() for c in commands(manager, set())]}


def watch(ls: AgentServer, session_id: str) -> None:
    """Tell a client that takes updates about the session's slash commands (its MCP prompts) as they change."""
    manager = _manager(ls, session_id)
    if manager is None:
        return

    def changed(what: str, conn: Any) -> None:
        if what in ("failed", "crashed") and conn is not None:  # every client hears of it (Helix too)
            error = str(conn.last_error or "").splitlines()
            ls.show(types.MessageType.Warning, f"agentls: MCP server {conn.spec.name} {what}: "
                                               f"{error[0] if error else 'no details'} (agent/listMcpServers has more)")
        if what in ("ready", "prompts", "crashed", "failed", "stopped") and ls.features.updates:
            ls.notify("agent/update", {"sessionId": session_id, "update": commands_update(manager)})

    manager.listeners.append(changed)


async def prepare(ls: AgentServer, session_id: str, prompt: Any, where: str) -> Any:
    """The turn's prompt: an MCP prompt's messages for ``/<prompt> args``, mentioned resources embedded."""
    from agentls.agent.mcp import mentions
    from agentls.agent.mcp.connection import Unavailable, describe_error
    from agentls.agent.mcp.prompts import PromptArgumentError, expand, find

    manager = _manager(ls, session_id)
    if manager is None or not manager.connections:
        return prompt
    blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else list(prompt)
    first = blocks[0] if blocks and isinstance(blocks[0], dict) and blocks[0].get("type") == "text" else None
    match = _COMMAND.match(str(first.get("text", "")).strip()) if first is not None else None
    command = find(manager, match.group(1), set()) if match is not None else None
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
