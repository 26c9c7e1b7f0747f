"""list_dir and search_files: the workspace on disk, as git sees it."""

from __future__ import annotations

import fnmatch
import re
import shutil

import anyio
import anyio.lowlevel

from agentls.agent.truncate import cap_text
from agentls.agent.paths import display, resolve_in_workspace
from agentls.agent.tools.base import JsonObject, Tool, ToolContext, ToolFailure, ToolOutput
from agentls.agent.tools.files import resolve
from agentls.agent.tools.gitignore import walk

MAX_LIST = 500
MAX_MATCHES = 200
MAX_FILE_BYTES = 2_000_000
MAX_SCANNED_FILES = 20_000


async def list_dir(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    path = resolve(ctx, args.get("path") or ".")
    depth = min(max(1, int(args.get("depth") or 2)), 6)
    if not path.is_dir():
        raise ToolFailure(f"{display(ctx.root, path)} is not a directory")
    lines: list[str] = []
    more = 0
    for n, (rel, is_dir, level) in enumerate(walk(ctx.root, path, depth)):
        if n % 200 == 199:
            await anyio.lowlevel.checkpoint()
        if len(lines) >= MAX_LIST:
            more += 1
            continue
        name = rel.rsplit("/", 1)[-1]
        lines.append("  " * (level - 1) + name + ("/" if is_dir else ""))
    head = f"{display(ctx.root, path)}/" if path != ctx.root.resolve() else "./"
    body = head + "\n" + ("\n".join(lines) if lines else "(empty)")
    if more:
        body += f"\n[... {more} more entries not shown; list a subdirectory or lower the depth]"
    return ToolOutput(body)


def _glob_match(rel: str, glob: str | None) -> bool:
    if not glob:
        return True
    name = rel.rsplit("/", 1)[-1]
    return fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(rel, "*/" + glob)


async def _search_with_rg(ctx: ToolContext, rg: str, pattern: str, target: str, glob: str | None) -> list[str]:
    cmd = [rg, "--line-number", "--no-heading", "--color", "never", "--max-columns", "300",
           "--max-columns-preview", "--max-count", "50", "-e", pattern]
    if glob:
        cmd += ["--glob", glob]
    cmd += ["--", target]
    out = bytearray()
    async with await anyio.open_process(cmd, cwd=ctx.root, stdin=None) as proc:
        assert proc.stdout is not None
        async for chunk in proc.stdout:
            out.extend(chunk)
            if len(out) > 2_000_000:
                proc.kill()
                break
        code = await proc.wait()
    if code == 2 and not out:
        raise ToolFailure(f"ripgrep rejected the pattern {pattern!r}")
    return out.decode("utf-8", "replace").splitlines()


async def _search_python(ctx: ToolContext, regex: re.Pattern[str], start: str, glob: str | None) -> list[str]:
    base = resolve(ctx, start)
    matches: list[str] = []
    files = [(display(ctx.root, base), False, 0)] if base.is_file() else walk(ctx.root, base, 64)
    for n, (rel, is_dir, _) in enumerate(files):
        if is_dir or not _glob_match(rel, glob) or n > MAX_SCANNED_FILES:
            continue
        try:
            file = resolve_in_workspace(ctx.root, rel)
            data = await anyio.Path(file).read_bytes() if file.stat().st_size <= MAX_FILE_BYTES else b""
        except (OSError, ValueError):
            continue
        if b"\x00" in data[:4096]:
            continue
        for i, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            if regex.search(line):
                matches.append(f"{rel}:{i}:{line[:300]}")
                if len(matches) > MAX_MATCHES:
                    return matches
    return matches


async def search_files(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    pattern = args.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise ToolFailure("a non-empty regex 'pattern' is required")
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolFailure(f"the pattern {pattern!r} is not a valid regular expression: {exc}") from None
    start = args.get("path") or "."
    target = resolve(ctx, start)
    glob = args.get("glob") or None
    rg = shutil.which("rg")
    if rg:
        lines = await _search_with_rg(ctx, rg, pattern, display(ctx.root, target), glob)
    else:
        lines = await _search_python(ctx, regex, str(start), glob)
    if not lines:
        return ToolOutput(f"no matches for {pattern!r} in {display(ctx.root, target)}")
    shown = lines[:MAX_MATCHES]
    body = "\n".join(shown)
    if len(lines) > MAX_MATCHES:
        body += "\n[... more matches not shown; narrow the pattern, path or glob]"
    text, _ = cap_text(body, ctx.output_limit)
    return ToolOutput(text)


def _path_or_root(args: JsonObject) -> list[str]:
    p = args.get("path")
    return [p] if isinstance(p, str) and p else ["."]


LIST_DIR = Tool(
    name="list_dir",
    description="List a directory of the workspace as a tree, skipping what .gitignore excludes.",
    parameters={"type": "object", "properties": {
        "path": {"type": "string", "description": "Directory relative to the workspace root (default: the root)"},
        "depth": {"type": "integer", "minimum": 1, "maximum": 6, "description": "How many levels (default 2)"}},
        "additionalProperties": False},
    kind="read", run=list_dir, read_only=True, paths=_path_or_root,
    title=lambda a: f"List {a.get('path') or '.'}",
)
SEARCH_FILES = Tool(
    name="search_files",
    description="Search file contents with a regular expression. Returns file:line:text matches (capped). "
                "Optional path (file or directory) and glob (e.g. '*.py') narrow the search.",
    parameters={"type": "object", "properties": {
        "pattern": {"type": "string", "description": "Regular expression"},
        "path": {"type": "string", "description": "File or directory to search (default: the workspace root)"},
        "glob": {"type": "string", "description": "Only files matching this glob"}},
        "required": ["pattern"], "additionalProperties": False},
    kind="search", run=search_files, read_only=True, paths=_path_or_root,
    title=lambda a: f"Search {a.get('pattern', '')!s}" + (f" in {a['path']}" if a.get("path") else ""),
)
