"""list_dir and search_files: the workspace on disk, as git sees it."""

from __future__ import annotations

import fnmatch
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.lowlevel
import anyio.to_thread

from ..fileio import FileTooLarge, NotRegularFile, read_small
from ..paths import display, resolve_in_workspace
from .base import JsonObject, Tool, ToolContext, ToolFailure, ToolOutput
from .writing import disk_size
from .guards import locate, with_note
from .gitignore import walk_kinds
from ..truncate import cap_text

MAX_LIST = 500
MAX_MATCHES = 200
MAX_FILE_BYTES = 2_000_000
MAX_SCANNED_FILES = 20_000


SPECIAL_MARKS = {"a FIFO (named pipe)": "FIFO", "a character device": "character device",
                 "a block device": "block device", "a socket": "socket"}


async def list_dir(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    path, note = await locate(ctx, args.get("path") or ".")
    depth = min(max(1, int(args.get("depth") or 2)), 6)
    if not path.is_dir():
        raise ToolFailure(f"{display(ctx.root, path)} is not a directory")
    lines: list[str] = []
    more = special = 0
    for n, (rel, is_dir, level, kind) in enumerate(walk_kinds(ctx.root, path, depth)):
        if n % 200 == 199:
            await anyio.lowlevel.checkpoint()
        if kind is not None:
            special += 1
        if len(lines) >= MAX_LIST:
            more += 1
            continue
        name = rel.rsplit("/", 1)[-1]
        mark = f"  [{SPECIAL_MARKS.get(kind, kind)}: not a regular file, not readable]" if kind is not None else ""
        lines.append("  " * (level - 1) + name + ("/" if is_dir else "") + mark)
    head = f"{display(ctx.root, path)}/" if path != ctx.root.resolve() else "./"
    body = head + "\n" + ("\n".join(lines) if lines else "(empty)")
    if more:
        body += f"\n[... {more} more entries not shown; list a subdirectory or lower the depth]"
    if special:
        body += (f"\n[{special} entr{'ies are' if special > 1 else 'y is'} not a regular file (FIFO, device or "
                 "socket); the file tools skip them]")
    return with_note(ToolOutput(body), note)


def has_upper(pattern: str) -> bool:
    """Smart case, like ripgrep's: a pattern with no upper-case letter (escapes like ``\\S`` aside) matches
    any case."""
    return any(c.isupper() for c in re.sub(r"\\.", "", pattern))


def _glob_match(rel: str, glob: str | None) -> bool:
    if not glob:
        return True
    name = rel.rsplit("/", 1)[-1]
    return fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(rel, "*/" + glob)


@dataclass
class Scan:
    """What a search looked at, skipped and cut: reported under the matches, never silent."""

    files: int = 0
    special: list[str] = field(default_factory=list)
    too_big: int = 0
    binary: int = 0
    unreadable: int = 0
    stopped_at: str | None = None  # the walk stopped here (file cap)
    output_cut: bool = False

    def report(self) -> str:
        parts = []
        if self.special:
            names = ", ".join(self.special[:5]) + (", ..." if len(self.special) > 5 else "")
            parts.append(f"{len(self.special)} not regular files (FIFO, device or socket) skipped: {names}")
        if self.too_big:
            parts.append(f"{self.too_big} files over {MAX_FILE_BYTES // 1_000_000} MB skipped")
        if self.binary:
            parts.append(f"{self.binary} binary files skipped")
        if self.unreadable:
            parts.append(f"{self.unreadable} unreadable files skipped")
        if self.stopped_at is not None:
            parts.append(f"STOPPED after {self.files:,} files at {self.stopped_at} (the search goes through names "
                         f"in sorted order, at most {MAX_SCANNED_FILES:,} files): files after it were NOT searched; "
                         "narrow the path or glob")
        if self.output_cut:
            parts.append("ripgrep's output was cut at 2 MB: later matches are missing; narrow the pattern")
        return f"\n[searched {self.files:,} files; " + "; ".join(parts) + "]" if parts else ""


async def _search_with_rg(ctx: ToolContext, rg: str, pattern: str, target: str, glob: str | None,
                          scan: Scan) -> list[str]:
    cmd = [rg, "--line-number", "--no-heading", "--color", "never", "--max-columns", "300", "--smart-case",
           "--max-columns-preview", "--max-count", "50", "--max-filesize", "2M", "-e", pattern]
    if glob:
        cmd += ["--glob", glob]
    cmd += ["--", target]
    out = bytearray()
    async with await anyio.open_process(cmd, cwd=ctx.root, stdin=None) as proc:
        assert proc.stdout is not None
        async for chunk in proc.stdout:
            out.extend(chunk)
            if len(out) > 2_000_000:
                scan.output_cut = True
                proc.kill()
                break
        code = await proc.wait()
    if code == 2 and not out:
        raise ToolFailure(f"ripgrep rejected the pattern {pattern!r}")
    return out.decode("utf-8", "replace").splitlines()


def _read_candidate(file: Path) -> bytes:
    return read_small(file, MAX_FILE_BYTES, follow=False)


async def _search_python(ctx: ToolContext, regex: re.Pattern[str], base: Path, glob: str | None,
                         scan: Scan) -> list[str]:
    matches: list[str] = []
    if base.is_file():
        files: Iterable[tuple[str, bool, int, str | None]] = [(display(ctx.root, base), False, 0, None)]
    else:
        files = walk_kinds(ctx.root, base, 64)
    for n, (rel, is_dir, _, kind) in enumerate(files):
        if n % 200 == 199:
            await anyio.lowlevel.checkpoint()
        if is_dir or not _glob_match(rel, glob):
            continue
        if kind is not None:
            scan.special.append(rel)
            continue
        if scan.files >= MAX_SCANNED_FILES:
            scan.stopped_at = rel
            break
        try:
            file = resolve_in_workspace(ctx.root, rel)
            data = await anyio.to_thread.run_sync(_read_candidate, file)
        except NotRegularFile:  # a symlink to a FIFO or a device
            scan.special.append(rel)
            continue
        except FileTooLarge:
            scan.too_big += 1
            continue
        except (OSError, ValueError):
            scan.unreadable += 1
            continue
        scan.files += 1
        if b"\x00" in data[:4096]:
            scan.binary += 1
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
        regex = re.compile(pattern, 0 if has_upper(pattern) else re.IGNORECASE)
    except re.error as exc:
        raise ToolFailure(f"the pattern {pattern!r} is not a valid regular expression: {exc}") from None
    target, note = await locate(ctx, args.get("path") or ".")
    await disk_size(ctx, target)  # a FIFO or a device given as the path is refused, not opened
    glob = args.get("glob") or None
    rg = shutil.which("rg")
    scan = Scan()
    if rg:
        lines = await _search_with_rg(ctx, rg, pattern, display(ctx.root, target), glob, scan)
    else:
        lines = await _search_python(ctx, regex, target, glob, scan)
    report = scan.report()
    if not lines:
        where = display(ctx.root, target)
        scope = where + (f" (files matching {glob!r})" if glob else "")
        elsewhere = await _elsewhere(ctx, rg, pattern, regex) if where != "." or glob else ""
        return with_note(ToolOutput(f"no matches for {pattern!r} in {scope}{report}{elsewhere}"), note)
    shown = lines[:MAX_MATCHES]
    body = "\n".join(shown)
    if len(lines) > MAX_MATCHES:
        body += "\n[... more matches not shown; narrow the pattern, path or glob]"
    text, _ = cap_text(body, max(1000, ctx.output_limit - len(report)))
    return with_note(ToolOutput(text + report), note)


ELSEWHERE_SHOWN = 5


async def _elsewhere(ctx: ToolContext, rg: str | None, pattern: str, regex: re.Pattern[str]) -> str:
    """For a search narrowed by path or glob that found nothing: what the whole workspace has, so a wrong
    guess at the file cannot pass for "nothing defines it" (issue 27)."""
    scan = Scan()
    if rg:
        found = await _search_with_rg(ctx, rg, pattern, ".", None, scan)
    else:
        found = await _search_python(ctx, regex, ctx.root, None, scan)
    if not found:
        return "\n[the rest of the workspace has no matches either]"
    more = "+" if len(found) > MAX_MATCHES or scan.stopped_at else ""
    first = "\n".join(line[:200] for line in found[:ELSEWHERE_SHOWN])
    return (f"\n[but the rest of the workspace has {min(len(found), MAX_MATCHES)}{more} "
            f"match{'' if len(found) == 1 else 'es'}; the first ones:]\n{first}")


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
    short="List a directory.", small_arguments=("path",), guide="",
)
SEARCH_FILES = Tool(
    name="search_files",
    description="Search file contents with a regular expression. Returns file:line:text matches (capped). "
                "Smart case: a pattern with no upper-case letter matches any case. "
                "Optional path (file or directory) and glob (e.g. '*.py') narrow the search.",
    parameters={"type": "object", "properties": {
        "pattern": {"type": "string", "description": "Regular expression"},
        "path": {"type": "string", "description": "File or directory to search (default: the workspace root)"},
        "glob": {"type": "string", "description": "Only files matching this glob"}},
        "required": ["pattern"], "additionalProperties": False},
    kind="search", run=search_files, read_only=True, paths=_path_or_root,
    title=lambda a: f"Search {a.get('pattern', '')!s}" + (f" in {a['path']}" if a.get("path") else ""),
    short="Search file contents for a regex (lowercase: any case).", small_arguments=("pattern", "path"),
    guide="Use `search_files` (a regex, optionally a `glob`) to find code.",
)
