"""The MCP servers' status as text, for ``/context`` and messages."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .manager import McpManager


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def status_lines(manager: McpManager | None) -> list[str]:
    if manager is None or (not manager.connections and not manager.problems):
        return ["MCP servers: none configured."]
    lines = [f"MCP servers ({len(manager.connections)}):"]
    for item in manager.status():
        tools = _count(item["toolCount"], "tool")
        extra = [_count(item["promptCount"], "prompt") if item["promptCount"] else "",
                 _count(item["resourceCount"], "resource") if item["resourceCount"] else "",
                 f"restarted {item['restarts']}×" if item["restarts"] else ""]
        line = f"- `{item['name']}` ({item['transport']}): {item['state']}, {', '.join([tools, *filter(None, extra)])}"
        if item["lastError"] and item["state"] != "ready":
            error = str(item["lastError"]).replace("\n", "\n    ")
            line += f"\n    last error: {error}"
        lines.append(line)
    lines += [f"- note: {problem}" for problem in manager.problems]
    return lines


def listing(manager: McpManager | None) -> dict[str, object]:
    """The answer of ``agent/listMcpServers`` and ``_agentls/listMcpServers``."""
    if manager is None:
        return {"servers": [], "problems": []}
    return {"servers": manager.status(), "problems": list(manager.problems)}
