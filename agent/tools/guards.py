"""The file tools' guards for a confused model, kept out of files.py: path repair with a note, and read
before overwrite (docs/loop.md §9.7)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

from ..paths import OutsideWorkspace, display
from . import path_repair
from .base import ToolContext, ToolFailure, ToolOutput

READ_FIRST = ("error: this edit was not made", "error: this overwrite was not made")  # how a read-first refusal starts
SHOWN_ON_REFUSAL = 400  # lines: a file this short comes with the refusal, which then counts as the read


async def locate(ctx: ToolContext, raw: object, *, creating: bool = False) -> tuple[Path, str | None]:
    """The path the model meant (agent/tools/path_repair.py) and, when it was repaired, a note saying so."""
    if not isinstance(raw, str) or not raw.strip():
        raise ToolFailure("a non-empty 'path' is required")
    try:
        found = await path_repair.locate(ctx.root, raw, creating=creating)
    except OutsideWorkspace as exc:
        raise ToolFailure(f"refused: {exc}") from None
    except path_repair.PathNotFound as exc:
        raise ToolFailure(str(exc)) from None
    return found.path, found.note


def with_note(out: ToolOutput, note: str | None) -> ToolOutput:
    if note:
        out.text = f"[{note}]\n{out.text}"
    return out


def may_change(ctx: ToolContext, path: Path, current: str, verb: str, show: Callable[[str], str],
               exact_fit: bool = False) -> None:
    """Read before overwrite (agent/tools/reads.py). The refusal of a short file carries its current content as
    read_file shows it (``show``) and counts as that read: the model can send its change again at once (a small
    model otherwise often gives up here). ``exact_fit``: an edit whose exact text is in the file once; it may go
    ahead on a file that was read but changed since (another session's edit elsewhere in it)."""
    if ctx.reads is None or (exact_fit and ctx.reads.was_read(path)):
        return
    why = ctx.reads.check(path, current, display(ctx.root, path), verb)
    if not why:
        return
    if current.count("\n") > SHOWN_ON_REFUSAL or len(current) > ctx.output_limit // 2 or "\x00" in current[:8192]:
        raise ToolFailure(f"this {verb} was not made: {why}")
    ctx.reads.saw(path, current)
    raise ToolFailure(f"this {verb} was not made: {why}\nThe file as it is now (this counts as reading it; if your "
                      f"change still applies, send it again):\n{show(current)}")


def breaks_python(path: Path, before: str | None, after: str) -> str | None:
    """Why a change to a ``.py`` file that parsed before would leave it unparsable (``TIMEOUT = 10`` edited into
    ``30 = 10``), else None. Files that did not parse before are left to the model."""
    if path.suffix != ".py" or before is None or len(after) > 200_000:
        return None
    try:
        ast.parse(before)
    except (SyntaxError, ValueError):
        return None
    try:
        ast.parse(after)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}" + (f": {exc.text.strip()!r}" if exc.text else "")
    except ValueError as exc:
        return str(exc)
    return None
