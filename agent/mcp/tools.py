"""MCP tools as agentls ``Tool``s, and the two resource tools.

A call asks for permission (in ``ask`` and ``auto-edit`` modes) unless the server annotates the tool
``readOnlyHint``; the question names the server, the tool and the arguments, and offers "always allow"
for the tool and for every tool of the server. Read-only tools run in parallel with other read-only calls.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .. import events
from . import schema
from ..tools.base import JsonObject, Tool, ToolContext, ToolOutput

if TYPE_CHECKING:
    from .connection import ServerConnection
    from .manager import McpManager

MAX_DESCRIPTION = 4000
ACTION = "other"  # the ACP tool kind of the permission question; see agent/permissions.py for its options


def permission_key(server: str, tool: str) -> str:
    return f"mcp:{server}/{tool}"


def _title(server: str, mcp_tool: Any) -> str:
    shown = getattr(mcp_tool, "title", None) or (mcp_tool.annotations.title if mcp_tool.annotations else None)
    return f"{server}: {shown or mcp_tool.name}"


def make_tool(conn: ServerConnection, mcp_tool: Any, name: str) -> Tool:
    server = conn.spec.name
    annotations = mcp_tool.annotations
    read_only = bool(annotations is not None and annotations.read_only_hint is True)
    title = _title(server, mcp_tool)
    description = f"[MCP server {server}] {(mcp_tool.description or mcp_tool.name).strip()}"[:MAX_DESCRIPTION]

    async def run(ctx: ToolContext, args: JsonObject) -> ToolOutput:
        if not read_only:
            shown = json.dumps(args, ensure_ascii=False, indent=2)
            question = f"MCP server: {server}\nTool: {mcp_tool.name}\nArguments:\n{shown}"
            refusal = await ctx.ask_permission(
                f"{title} {json.dumps(args, ensure_ascii=False)[:200]}", ACTION,
                {"server": server, "tool": mcp_tool.name, "arguments": args},
                permission_key(server, mcp_tool.name), False, [events.text_content(question)])
            if refusal is not None:
                return ToolOutput(refusal, is_error=True)
        return await conn.call_tool(mcp_tool.name, args)

    return Tool(name=name, description=description, parameters=schema.normalize(mcp_tool.input_schema),
                kind=ACTION, run=run, read_only=read_only, title=lambda args: title, timeout=None)


LIST_RESOURCES = "list_mcp_resources"
READ_RESOURCE = "read_mcp_resource"


def resource_tools(manager: McpManager) -> list[Tool]:
    async def list_run(ctx: ToolContext, args: JsonObject) -> ToolOutput:
        wanted = args.get("server")
        lines = []
        for conn in manager.connections:
            if wanted and conn.spec.name != wanted:
                continue
            for res in conn.resources:
                about = f" ({res.mime_type})" if res.mime_type else ""
                desc = f": {res.description}" if res.description else ""
                lines.append(f"{conn.spec.name}  {res.uri}  {res.name}{about}{desc}")
        if not lines:
            return ToolOutput("no MCP resources" + (f" on server {wanted!r}" if wanted else ""))
        return ToolOutput("server  uri  name\n" + "\n".join(lines))

    async def read_run(ctx: ToolContext, args: JsonObject) -> ToolOutput:
        conn = manager.connection(str(args["server"]))
        if conn is None:
            names = ", ".join(c.spec.name for c in manager.connections)
            return ToolOutput(f"error: there is no MCP server {args['server']!r} (servers: {names})", is_error=True)
        return await conn.read_resource(str(args["uri"]))

    listing = Tool(LIST_RESOURCES, "List the resources (documents, data) the session's MCP servers offer, with the "
                   "URIs read_mcp_resource takes.",
                   {"type": "object", "properties": {"server": {"type": "string", "description": "only this server"}}},
                   "read", list_run, read_only=True, title=lambda args: "List MCP resources", timeout=60.0)
    reading = Tool(READ_RESOURCE, "Read one resource of an MCP server by its URI (see list_mcp_resources).",
                   {"type": "object", "properties": {"server": {"type": "string"}, "uri": {"type": "string"}},
                    "required": ["server", "uri"]},
                   "read", read_run, read_only=True, title=lambda args: f"Read {args.get('uri', '')}", timeout=None)
    return [listing, reading]
