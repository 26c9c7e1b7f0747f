"""Each live session's MCP servers (agent/mcp, docs/mcp.md), once for both faces.

The servers start with the session's agent, in the background: the face's own (LSP
``initializationOptions.mcpServers``), then the configuration files, then the session's (ACP
``session/new``/``load``/``resume``, LSP ``agent/newSession``). Their configuration problems, and a server
that fails to start, become the session's notices; the status goes to the editor as a
``session_info_update`` (``_meta.agentls.mcpServers``) on every change. Closing the session stops them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .notices import Notice

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.agent.config import Settings
    from agentls.agent.mcp.connection import ServerConnection
    from .live import LiveSession

log = logging.getLogger("agentls.runtime")


def start(session: LiveSession, agent: AIAgent, settings: Settings, face_servers: Any) -> None:
    """Build the session's ``McpManager`` and start it (nothing is awaited: the servers start after the answer)."""
    from agentls.agent.mcp.build import build_manager, report_to

    if session.mcp is not None:
        return
    layers: list[tuple[Any, str]] = []
    if face_servers:
        layers.append((face_servers, "initializationOptions.mcpServers"))
    if session.mcp_servers:
        layers.append((session.mcp_servers, session.mcp_source))
    manager = build_manager(agent.registry, agent.root, trusted=settings.trust_workspace_config, layers=layers)
    agent.sandbox.protect_servers([c.spec for c in manager.connections])  # what they run stays read-only
    session.notices += [Notice(problem, "warning") for problem in manager.problems]
    report_to(manager, agent.host.send_update)

    def failed(what: str, conn: ServerConnection | None) -> None:
        if what == "failed" and conn is not None and not session.closed:
            session.notices.append(Notice(f"MCP server {conn.spec.name} failed: {conn.last_error}", "warning"))

    manager.listeners.append(failed)
    session.mcp = manager
    manager.start()


async def stop(session: LiveSession) -> None:
    """Stop every server of the session and wait for their processes to be gone."""
    manager, session.mcp = session.mcp, None
    if manager is not None:
        try:
            await manager.aclose()
        except Exception:
            log.exception("stopping the MCP servers of session %s failed", session.session_id)
