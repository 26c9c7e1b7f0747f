"""read_file, write_file and edit_file: through the host, so the editor's buffers are what is read and edited."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

from .. import events
from ..fileio import MAX_SCAN_BYTES, FileTooLarge, NotRegularFile, TextWindow, human_size
from ..safe_write import UnsafeTarget
from ..paths import OutsideWorkspace, display, resolve_in_workspace
from . import advice, matching, overwrite
from .base import JsonObject, Tool, ToolContext, ToolFailure, ToolOutput
from .described import described_edit
from .fences import unfenced
from .guards import breaks_python, locate, may_change, with_note
from .writing import disk_size, existing_text, read_current, refused, write_checked

DEFAULT_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_COLUMN = 4_000_000  # how far into one line ``column`` reaches (the line is streamed up to there)


def resolve(ctx: ToolContext, raw: object) -> Path:
    if not isinstance(raw, str) or not raw.strip():
        raise ToolFailure("a non-empty 'path' is required")
    try:
        return resolve_in_workspace(ctx.root, raw)
    except OutsideWorkspace as exc:
        raise ToolFailure(f"refused: {exc}") from None


WINDOW_FROM_BYTES = 1_000_000  # larger files are read as a window of lines, never whole


def _cut_note(n: int, full: int | None, end: int) -> str:
    """What follows a line cut at character ``end``, and how to read on."""
    more = f"{full - end:,} more characters" if full else "the line goes on"
    return f"... [line {n} is cut here: {more}; read on with offset={n} and column={end + 1}]"


def _format(rel: str, window: TextWindow, offset: int, column: int = 1) -> str:
    if window.binary:
        raise ToolFailure(f"{rel} looks like a binary file; it cannot be read as text")
    total = window.total
    if total is not None and offset > max(1, total):
        raise ToolFailure(f"{rel} has {total} lines; offset {offset} is past the end")
    numbered = []
    for n, line in enumerate(window.lines, start=offset):
        start = column if n == offset else 1
        if start > 1:
            if len(line) <= start - 1 and n not in window.cut:
                raise ToolFailure(f"line {n} of {rel} is shorter than {start - 1:,} characters; column {start} "
                                  "is past its end")
            line = line[start - 1:]
        if n in window.cut:
            line += _cut_note(n, window.cut[n], start - 1 + len(line))
        elif start > 1:
            line += f" [characters {start:,}-{start - 1 + len(line):,}: the end of line {n}]"
        numbered.append(f"{n:>6}\t{line}")
    body = "\n".join(numbered) if numbered else "(empty file)"
    end = offset + len(window.lines) - 1
    if window.stopped:
        body += (f"\n\n[stopped reading {rel} at {human_size(MAX_SCAN_BYTES)} before reaching line {end + 1}; this "
                 "tool cannot show lines that far into the file]")
    elif window.more:
        size = f"of {total}" if total is not None else \
            f"of a {human_size(window.size)} file; more follow" if window.size else "; more follow"
        body += f"\n\n[showing lines {offset}-{end} {size}; use offset/limit to read more]"
    return body


async def read_file(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    offset = max(1, int(args.get("offset") or 1))
    limit = max(1, int(args.get("limit") or DEFAULT_LINES))
    column = max(1, int(args.get("column") or 1))
    if column > MAX_COLUMN:
        raise ToolFailure(f"column {column:,} is too far into a line: this tool reads at most {MAX_COLUMN:,} "
                          "characters into one line")
    line_chars = column - 1 + MAX_LINE_CHARS
    limit = 1 if column > 1 else limit  # a slice of one long line
    outside = await ctx.read_outside(args.get("path")) if ctx.read_outside is not None else None
    if outside is not None:  # a user-level skill's file (agent/workflows/skills.py): read-only, from disk
        window = TextWindow.of_text(outside, offset, limit, line_chars)
        return ToolOutput(_format(str(args["path"]), window, offset, column))
    path, note = await locate(ctx, args.get("path"))
    rel = display(ctx.root, path)
    size = await disk_size(ctx, path)
    if size is not None and size > WINDOW_FROM_BYTES:
        try:
            window = await ctx.host.read_window(path, offset, limit, line_chars)
        except (FileNotFoundError, NotADirectoryError):
            raise ToolFailure(f"{rel} does not exist") from None
        except UnicodeDecodeError:
            raise ToolFailure(f"{rel} is not a UTF-8 text file") from None
        except (NotRegularFile, FileTooLarge, UnsafeTarget) as exc:
            raise refused(rel, exc) from None
    else:
        text = await read_current(ctx, path)
        if text is None:
            raise ToolFailure(f"{rel} does not exist")
        window = TextWindow.of_text(text, offset, limit, line_chars)
        if ctx.reads is not None and not window.binary:
            ctx.reads.saw(path, text)
    out = ToolOutput(_format(rel, window, offset, column), locations=[events.location(str(path), offset)])
    return with_note(out, note)


def _shown(rel: str) -> Callable[[str], str]:
    """The file as read_file shows it (for a read-first refusal)."""
    return lambda text: _format(rel, TextWindow.of_text(text, 1, DEFAULT_LINES, MAX_LINE_CHARS), 1)


async def write_file(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    path, note = await locate(ctx, args.get("path"), creating=True)
    content = args.get("content")
    if not isinstance(content, str):
        raise ToolFailure("'content' must be a string")
    content = unfenced(content, path.suffix) if ctx.profile.guarded_writes else content  # it wraps a file in a code block
    await disk_size(ctx, path)
    old = await read_current(ctx, path)
    rel = display(ctx.root, path)
    if old is not None and ctx.profile.guarded_writes and ctx.rewrite is not None:  # it sends junk or a fragment as the file
        if overwrite.merge(old, content).text == old:
            return ToolOutput(f"{rel} already has exactly this content; nothing was written. If the change you "
                              "wanted is made, answer the user.")
        raise ToolFailure(f"{rel} already exists; write_file only creates new files. To change {rel}, call "
                          f'edit_file with its path and the change in words: {{"path": "{rel}", "change": "..."}}')
    echo = advice.template_echo(content) if ctx.profile.guarded_writes else None
    if echo:
        raise ToolFailure(echo)
    if old is None:
        return with_note(await write_checked(ctx, path, old, content, "Created"), note)
    may_change(ctx, path, old, "overwrite", _shown(rel))
    merged = overwrite.merge(old, content, guarded=ctx.profile.guarded_writes)  # keeps what the model did not mean to change (docs/loop.md §9.7)
    if merged.fragment and ctx.profile.guarded_writes:  # never "confirmed": a small model repeats its call
        choice = advice.region_choice(old, content)
        raise ToolFailure(merged.fragment + (f" {choice}" if choice else ""))
    if merged.fragment and ctx.reads is not None and not ctx.reads.confirmed(path, content):
        ctx.reads.ask_confirmation(path, content)
        raise ToolFailure(merged.fragment + overwrite.AGAIN)
    if merged.text == old:
        raise ToolFailure(f"{rel} already has this content; nothing changed")
    broken = breaks_python(path, old, merged.text) if ctx.profile.guarded_writes else None
    if broken:
        raise ToolFailure(f"this write was not made: it would break the Python syntax of {rel} ({broken})")
    out = await write_checked(ctx, path, old, merged.text, "Wrote")
    if merged.notes and not out.is_error:
        out.text += "\n[" + "; ".join(merged.notes) + "]"
    return with_note(out, note)


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


def _replace(text: str, old_string: str, new_string: str, replace_all: bool, rel: str
             ) -> tuple[str, matching.Found]:
    """The edit applied to ``text``: the exact text, else a tolerant match (agent/tools/matching.py)."""
    try:
        found = matching.find(text, old_string, new_string)
    except matching.NotFound:
        raise ToolFailure(f"'old_string' was not found in {rel}. {nearest_match(text, old_string)}") from None
    count = len(found.spans)
    if count > 1 and not replace_all:
        lines = [str(matching.line_of(text, span.start)) for span in found.spans[:20]]
        how = f" ({found.how})" if found.how else ""
        choices = advice.unique_choices(text, found.spans)
        raise ToolFailure(f"'old_string' appears {count} times in {rel}{how} (at lines {', '.join(lines)}); include "
                          "more surrounding lines to make it unique, or set replace_all to true"
                          + (f".\n{choices}" if choices else ""))
    new_text = matching.apply(text, found.spans)
    if new_text == text:
        raise ToolFailure(f"the text found in {rel} already reads like new_string; nothing changed")
    return new_text, found


async def edit_file(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    if "change" in args and "old_string" not in args:  # a small model's edit, said in words
        return await described_edit(ctx, args, _shown)
    path, note = await locate(ctx, args.get("path"))
    old_string, new_string = args.get("old_string"), args.get("new_string")
    if not isinstance(old_string, str) or not isinstance(new_string, str):
        raise ToolFailure("'old_string' and 'new_string' must be strings")
    rel, text = await existing_text(ctx, path)
    if old_string == "":
        raise ToolFailure("'old_string' is empty: put the exact text to replace in it (to create a new file, "
                          "use write_file)")
    replace_all = bool(args.get("replace_all"))
    exact = text.count(old_string)
    # Read first: a model that has not seen the file gets it with the refusal, whatever else is wrong.
    may_change(ctx, path, text, "edit", _shown(rel), exact_fit=exact == 1 or (replace_all and exact > 0))
    echo = matching.placeholder_echo(old_string, new_string) or (
        advice.template_echo(new_string) if ctx.profile.guarded_writes else None)
    if echo:
        raise ToolFailure(echo)
    if old_string == new_string:
        block = advice.block_choice(text, old_string)
        raise ToolFailure("'old_string' and 'new_string' are the same; nothing to change. new_string must be the "
                          "text of old_string with the change made." + (f"\n{block}" if block else ""))
    new_text, found = _replace(text, old_string, new_string, replace_all, rel)
    broken = breaks_python(path, text, new_text) if ctx.profile.guarded_writes else None
    if broken:
        choices = advice.syntax_choices(text, old_string, new_string, found.spans)
        raise ToolFailure(f"this edit was not made: it would break the Python syntax of {rel} ({broken}). "
                          "new_string replaces old_string as a whole: include everything that must remain."
                          + (f"\n{choices}" if choices else ""))
    last: list[tuple[str, matching.Found]] = [(text, found)]  # the text the edit was applied to, and how

    def redo(current: str) -> str:
        again, matched = _replace(current, old_string, new_string, replace_all, rel)
        last[0] = (current, matched)
        return again

    out = await write_checked(ctx, path, text, new_text, "Edited", redo)
    base, found = last[0]
    if not out.is_error and ctx.profile.guarded_writes:
        renamed = advice.still_used(old_string, new_string, matching.apply(base, found.spans))
        if renamed:
            out.text += "\n" + renamed
    if not out.is_error and len(found.spans) > 1:
        out.text += f" ({len(found.spans)} replacements)"
    if not out.is_error and found.how:
        first = found.spans[0]
        shown = base[first.start:first.end]
        shown = shown if len(shown) <= 300 else shown[:300] + "..."
        out.text += f"\n[old_string was matched {found.how}, at line {matching.line_of(base, first.start)}: {shown!r}]"
    return with_note(out, note)


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
        "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read"},
        "column": {"type": "integer", "minimum": 1,
                   "description": "Read on in a long line: the first character of line `offset` to show"}},
        "required": ["path"], "additionalProperties": False},
    kind="read", run=read_file, read_only=True, paths=_path_of, title=_title("Read"),  # type: ignore[arg-type]
    short="Read a file (numbered lines).", small_arguments=("path",), names_existing_file=True,
    guide="Use `read_file` (with `offset`/`limit` for big files) instead of printing files in the terminal; it "
          "sees the editor's unsaved buffers.",
)
WRITE_FILE = Tool(
    name="write_file",
    description="Create a file or overwrite it completely with new content. Prefer edit_file for changes to an "
                "existing file; overwriting one needs a read_file of it first.",
    parameters={"type": "object", "properties": {
        "path": {"type": "string", "description": "Path relative to the workspace root"},
        "content": {"type": "string", "description": "The complete new content of the file"}},
        "required": ["path", "content"], "additionalProperties": False},
    kind="edit", run=write_file, paths=_path_of, title=_title("Write"),  # type: ignore[arg-type]
    short="Create a new file with this content (overwriting a file replaces all of it).",
    small_arguments=("path", "content"), guide="Use `write_file` only to create a file or replace most of one.",
)
EDIT_FILE = Tool(
    name="edit_file",
    description="Replace an exact string in a file. old_string must match the file (a unique match that differs "
                "only in indentation, spacing or quote style is used when the exact text is absent) and be unique "
                "unless replace_all is true. Read the file first.",
    parameters={"type": "object", "properties": {
        "path": {"type": "string", "description": "Path relative to the workspace root"},
        "old_string": {"type": "string", "description": "The exact text to replace"},
        "new_string": {"type": "string", "description": "The text to put in its place"},
        "replace_all": {"type": "boolean", "description": "Replace every occurrence"}},
        "required": ["path", "old_string", "new_string"], "additionalProperties": False},
    kind="edit", run=edit_file, paths=_path_of, title=_title("Edit"),  # type: ignore[arg-type]
    # an edit the editor applies; one said in words has no tool limit, its model call the provider's (tool_runner.py)
    timeout=300.0,
    short="Change a file: say in words what to change; you get the diff of what was changed.",
    names_existing_file=True,  # its small-model arguments are the described edit's (agent/local/prompt.py)
    guide="Prefer `edit_file` for small changes: `old_string` must match the file exactly (whitespace included) "
          "and be unique, so include enough surrounding lines.",
)
