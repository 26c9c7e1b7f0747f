"""read_file, write_file and edit_file: through the host, so the editor's buffers are what is read and edited."""

from __future__ import annotations

import difflib
from pathlib import Path

from agentls.agent import events
from agentls.agent.paths import OutsideWorkspace, display, resolve_in_workspace
from agentls.agent.tools.base import JsonObject, Tool, ToolContext, ToolFailure, ToolOutput

DEFAULT_LINES = 2000
MAX_LINE_CHARS = 2000


def resolve(ctx: ToolContext, raw: object) -> Path:
    if not isinstance(raw, str) or not raw.strip():
        raise ToolFailure("a non-empty 'path' is required")
    try:
        return resolve_in_workspace(ctx.root, raw)
    except OutsideWorkspace as exc:
        raise ToolFailure(f"refused: {exc}") from None


async def read_current(ctx: ToolContext, path: Path) -> str | None:
    try:
        return await ctx.host.read_text(path)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ToolFailure(f"{display(ctx.root, path)} is a directory; use list_dir") from None
    except UnicodeDecodeError:
        raise ToolFailure(f"{display(ctx.root, path)} is not a UTF-8 text file") from None


async def read_file(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    path = resolve(ctx, args.get("path"))
    text = await read_current(ctx, path)
    rel = display(ctx.root, path)
    if text is None:
        raise ToolFailure(f"{rel} does not exist")
    if "\x00" in text[:8192]:
        raise ToolFailure(f"{rel} looks like a binary file; it cannot be read as text")
    lines = text.splitlines()
    offset = max(1, int(args.get("offset") or 1))
    limit = max(1, int(args.get("limit") or DEFAULT_LINES))
    if offset > max(1, len(lines)):
        raise ToolFailure(f"{rel} has {len(lines)} lines; offset {offset} is past the end")
    chosen = lines[offset - 1: offset - 1 + limit]
    numbered = []
    for n, line in enumerate(chosen, start=offset):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"... [{len(line) - MAX_LINE_CHARS} more characters]"
        numbered.append(f"{n:>6}\t{line}")
    body = "\n".join(numbered) if numbered else "(empty file)"
    end = offset + len(chosen) - 1
    if end < len(lines):
        body += f"\n\n[showing lines {offset}-{end} of {len(lines)}; use offset/limit to read more]"
    return ToolOutput(body, locations=[events.location(str(path), offset)])


async def _write(ctx: ToolContext, path: Path, old: str | None, new: str, verb: str) -> ToolOutput:
    rel = display(ctx.root, path)
    diff = events.diff_content(str(path), old, new)
    ask = {"Created": "Create", "Wrote": "Overwrite", "Edited": "Edit"}.get(verb, verb)
    refusal = await ctx.ask_permission(f"{ask} {rel}", "edit", {"path": rel}, "edit", False, [diff])
    if refusal:
        return ToolOutput(refusal, is_error=True)
    await ctx.checkpoint(path, old)
    outcome = await ctx.host.write_text(path, new, previous=old)
    if not outcome.applied:
        return ToolOutput(f"{verb} of {rel} was not applied: {outcome.message or 'the user rejected this edit'}",
                          is_error=True)
    summary = _change_summary(old, new)
    return ToolOutput(f"{verb} {rel} ({summary})", content=[diff], locations=[events.location(str(path))])


def _change_summary(old: str | None, new: str) -> str:
    if old is None:
        return f"created, {len(new.splitlines())} lines"
    added = removed = 0
    for line in difflib.ndiff(old.splitlines(), new.splitlines()):
        if line.startswith("+ "):
            added += 1
        elif line.startswith("- "):
            removed += 1
    return f"+{added} -{removed} lines"


async def write_file(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    path = resolve(ctx, args.get("path"))
    content = args.get("content")
    if not isinstance(content, str):
        raise ToolFailure("'content' must be a string")
    old = await read_current(ctx, path)
    return await _write(ctx, path, old, content, "Wrote" if old is not None else "Created")


def nearest_match(text: str, needle: str) -> str:
    """The stretch of ``text`` most like ``needle``, to show the model what is really there."""
    lines = text.splitlines()
    want = needle.splitlines() or [needle]
    size = max(1, len(want))
    best, best_at = 0.0, 0
    target = "\n".join(want)
    step = 1 if len(lines) < 5000 else max(1, len(lines) // 5000)
    for i in range(0, max(1, len(lines) - size + 1), step):
        ratio = difflib.SequenceMatcher(None, "\n".join(lines[i:i + size]), target, autojunk=False).quick_ratio()
        if ratio > best:
            best, best_at = ratio, i
    window = lines[best_at: best_at + size]
    numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(window, start=best_at + 1))
    return f"The closest text (lines {best_at + 1}-{best_at + len(window)}, {best:.0%} similar):\n{numbered}"


async def edit_file(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    path = resolve(ctx, args.get("path"))
    old_string, new_string = args.get("old_string"), args.get("new_string")
    if not isinstance(old_string, str) or not isinstance(new_string, str):
        raise ToolFailure("'old_string' and 'new_string' must be strings")
    rel = display(ctx.root, path)
    text = await read_current(ctx, path)
    if text is None:
        raise ToolFailure(f"{rel} does not exist; use write_file to create it")
    if old_string == "":
        raise ToolFailure("'old_string' is empty; to create or overwrite a file use write_file")
    if old_string == new_string:
        raise ToolFailure("'old_string' and 'new_string' are the same; nothing to change")
    count = text.count(old_string)
    if count == 0:
        raise ToolFailure(f"'old_string' was not found in {rel}. {nearest_match(text, old_string)}")
    if count > 1 and not args.get("replace_all"):
        lines: list[str] = []
        at = text.find(old_string)
        while at >= 0 and len(lines) < 20:
            lines.append(str(text.count("\n", 0, at) + 1))
            at = text.find(old_string, at + 1)
        raise ToolFailure(f"'old_string' appears {count} times in {rel} (at lines {', '.join(lines)}); include more "
                          "surrounding lines to make it unique, or set replace_all to true")
    new_text = text.replace(old_string, new_string) if args.get("replace_all") else \
        text.replace(old_string, new_string, 1)
    out = await _write(ctx, path, text, new_text, "Edited")
    if not out.is_error and count > 1:
        out.text += f" ({count} replacements)"
    return out


def _path_of(args: JsonObject) -> list[str]:
    p = args.get("path")
    return [p] if isinstance(p, str) else []


def _title(verb: str) -> object:
    return lambda args: f"{verb} {args.get('path', '')}".strip()


READ_FILE = Tool(
    name="read_file",
    description="Read a text file of the workspace (the editor's unsaved buffer when it is open). Output is "
                "numbered lines. Use offset (1-based line) and limit (lines) for large files.",
    parameters={"type": "object", "properties": {
        "path": {"type": "string", "description": "Path relative to the workspace root"},
        "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)"},
        "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read"}},
        "required": ["path"], "additionalProperties": False},
    kind="read", run=read_file, read_only=True, paths=_path_of, title=_title("Read"),  # type: ignore[arg-type]
)
WRITE_FILE = Tool(
    name="write_file",
    description="Create a file or overwrite it completely with new content. Prefer edit_file for changes to an "
                "existing file.",
    parameters={"type": "object", "properties": {
        "path": {"type": "string", "description": "Path relative to the workspace root"},
        "content": {"type": "string", "description": "The complete new content of the file"}},
        "required": ["path", "content"], "additionalProperties": False},
    kind="edit", run=write_file, paths=_path_of, title=_title("Write"),  # type: ignore[arg-type]
)
EDIT_FILE = Tool(
    name="edit_file",
    description="Replace an exact string in a file. old_string must match the file exactly (whitespace "
                "included) and be unique unless replace_all is true. Read the file first.",
    parameters={"type": "object", "properties": {
        "path": {"type": "string", "description": "Path relative to the workspace root"},
        "old_string": {"type": "string", "description": "The exact text to replace"},
        "new_string": {"type": "string", "description": "The text to put in its place"},
        "replace_all": {"type": "boolean", "description": "Replace every occurrence"}},
        "required": ["path", "old_string", "new_string"], "additionalProperties": False},
    kind="edit", run=edit_file, paths=_path_of, title=_title("Edit"),  # type: ignore[arg-type]
)
