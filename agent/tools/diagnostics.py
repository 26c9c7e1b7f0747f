"""The ``diagnostics`` tool, and the edit tools' "new problems after this edit" (agent/diagnostics.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..diagnostics import after_edit_note, counts, host_diagnostics, render
from ..host import DiagnosticsHost
from ..paths import OutsideWorkspace, display, resolve_in_workspace
from .base import JsonObject, Tool, ToolContext, ToolOutput
from .files import resolve

UNAVAILABLE = ("error: diagnostics are unavailable: this editor does not report its problems to agentls (only "
               "clients that answer agent/diagnostics do, like the VS Code extension and the Neovim plugin). "
               "To check the code, run the project's linter, type checker or tests with the terminal tool.")


async def diagnostics(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    raw = args.get("path")
    if raw is not None:
        paths = [resolve(ctx, raw)]
    else:
        paths = list(dict.fromkeys(ctx.edited))
        if not paths:
            return ToolOutput("No file was changed in this turn yet; pass a path to see a file's problems.")
    found = await host_diagnostics(ctx.host, paths, settle=False)
    if found is None:
        return ToolOutput(UNAVAILABLE, is_error=True)
    items = [d for p in paths for d in found.get(p, [])]
    clean = [display(ctx.root, p) for p in paths if not [d for d in found.get(p, []) if d.severity != "hint"]]
    lines = []
    if items and render(ctx.root, items):
        lines.append(f"Problems ({counts([d for d in items if d.severity != 'hint'])}):\n{render(ctx.root, items)}")
    if clean:
        lines.append("No problems in " + ", ".join(clean) + ".")
    return ToolOutput("\n\n".join(lines))


DIAGNOSTICS = Tool(
    name="diagnostics",
    description="The problems the editor shows (errors and warnings from its language servers and linters) "
                "for a file, or, without a path, for the files changed in this turn. Edits already report the "
                "new problems they bring in.",
    parameters={"type": "object", "properties": {
        "path": {"type": "string", "description": "A file, relative to the workspace root (default: the files "
                                                  "changed in this turn)"}},
        "additionalProperties": False},
    kind="read", run=diagnostics, read_only=True,
    paths=lambda args: [args["path"]] if isinstance(args.get("path"), str) else [],
    title=lambda args: f"Diagnostics {args.get('path', '')}".strip(),
    short="The errors and warnings the editor shows for a file.", small_arguments=("path",), guide="",
)


def _paths(ctx: ToolContext, tool: Tool, args: JsonObject) -> list[Path]:
    out = []
    for raw in tool.paths(args):
        try:
            out.append(resolve_in_workspace(ctx.root, raw))
        except OutsideWorkspace:
            continue
    return out


def with_diagnostics(tool: Tool) -> Tool:
    """``tool`` (an edit) whose successful result ends with the new problems the edit brought into its files."""
    inner = tool.run

    async def run(ctx: ToolContext, args: JsonObject) -> ToolOutput:
        paths = _paths(ctx, tool, args)
        before = None
        if paths and isinstance(ctx.host, DiagnosticsHost):
            before = await host_diagnostics(ctx.host, paths, settle=False)
        out = await inner(ctx, args)
        if out.is_error:
            return out
        ctx.edited.extend(p for p in paths if p not in ctx.edited)
        if before is None:
            return out
        after = await host_diagnostics(ctx.host, paths, settle=True)
        if after is None:
            return out
        for path in paths:
            note = after_edit_note(ctx.root, path, before.get(path, []), after.get(path, []))
            if note:
                out.text += note
        return out

    return replace(tool, run=run)
