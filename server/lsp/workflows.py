"""``agent/listCommands``: the slash commands a client may offer (docs/protocol.md, docs/workflows.md): the
session's command files and skills (read again now), ``/memory``, and its MCP servers' prompts. Without a
session (a panel before its first prompt), those of a directory (``cwd``, default the workspace root)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .params import Params

if TYPE_CHECKING:
    from .server import AgentServer

MEMORY = {"name": "memory", "description": "Show what agentls remembers (user and project memory) and where it lives",
          "argumentHint": None, "kind": "builtin"}


async def list_commands(ls: AgentServer, raw: Any, where: str = "agent/listCommands") -> dict[str, Any]:
    from agentls.agent.mcp.prompts import commands
    from . import lookup

    p = Params(where, raw)
    if p.raw.get("sessionId") is None:
        return await _of_directory(p.directory("cwd") or ls.root)
    session, agent = await lookup.agent(ls, p.session_id(), where)
    workflows = agent.workflows
    found = list((await workflows.refresh()).values()) if workflows is not None else []
    listed: list[dict[str, Any]] = [MEMORY, *(c.listing() for c in found)]
    for prompt in commands(session.mcp, {c["name"] for c in listed}):
        info = prompt.available()
        hint = info.get("input")
        listed.append({"name": info["name"], "description": info["description"],
                       "argumentHint": hint.get("hint") if isinstance(hint, dict) else None, "kind": "mcp"})
    return {"commands": listed, "problems": workflows.problems() if workflows is not None else []}


async def _of_directory(cwd: Path) -> dict[str, Any]:
    from agentls.agent.config import user_config_path
    from agentls.agent.workflows import Workflows
    from agentls.agent.workflows.scan import user_dir

    workflows = Workflows(cwd, user=user_dir(user_config_path()))  # no hooks: nothing runs for a listing
    found = await workflows.refresh()
    return {"commands": [MEMORY, *(c.listing() for c in found.values())], "problems": workflows.problems()}
