"""Reading a file's current text and writing a change to it: the checks every editing tool shares."""

from __future__ import annotations

import difflib
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from .. import events
from ..fileio import FileTooLarge, NotRegularFile, human_size, kind_of
from ..paths import display
from ..safe_write import UnsafeTarget, lock_for
from ..sandbox.protect import runs_later
from . import advice, overwrite
from .base import ToolContext, ToolFailure, ToolOutput

WRITE_ATTEMPTS = 10


def refused(rel: str, exc: OSError) -> ToolFailure:
    if isinstance(exc, NotRegularFile):
        return ToolFailure(f"{rel} is {exc.kind}, not a regular file; it is not read or written")
    if isinstance(exc, FileTooLarge):
        return ToolFailure(f"{rel} is {human_size(exc.size)}; files over {human_size(exc.cap)} are not read whole or "
                           "edited (read_file shows any part of it with offset and limit)")
    return ToolFailure(f"{rel}: {exc.strerror or exc}")


async def disk_size(ctx: ToolContext, path: Path) -> int | None:
    """The size of the regular file at ``path`` (None when nothing is there); a FIFO, a device or a socket is
    refused before anyone (the host, the editor) tries to open it."""
    try:
        st = await anyio.to_thread.run_sync(os.stat, path)
    except OSError:
        return None
    kind = kind_of(st.st_mode)
    if kind is not None and kind != "a directory":
        raise refused(display(ctx.root, path), NotRegularFile(path, kind))
    return st.st_size if kind is None else None


async def existing_text(ctx: ToolContext, path: Path) -> tuple[str, str]:
    """``(rel, text)`` of the regular file an edit changes; a missing one is a ToolFailure."""
    rel = display(ctx.root, path)
    await disk_size(ctx, path)
    text = await read_current(ctx, path)
    if text is None:
        raise ToolFailure(f"{rel} does not exist")
    return rel, text


async def read_current(ctx: ToolContext, path: Path) -> str | None:
    rel = display(ctx.root, path)
    try:
        return await ctx.host.read_text(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        raise ToolFailure(f"{rel} is a directory; use list_dir") from None
    except UnicodeDecodeError:
        raise ToolFailure(f"{rel} is not a UTF-8 text file") from None
    except (NotRegularFile, FileTooLarge, UnsafeTarget) as exc:
        raise refused(rel, exc) from None


Redo = Callable[[str], str]  # the change applied again to the file's current text (raises ToolFailure)


async def write_checked(ctx: ToolContext, path: Path, old: str | None, new: str, verb: str, redo: Redo | None = None
                 ) -> ToolOutput:
    """Ask, then under the path's lock: the file must still hold ``old``; if it does not, an edit (``redo``)
    is applied again to what it holds now, anything else fails. Never reports a write that did not land."""
    rel = display(ctx.root, path)
    diff = events.diff_content(str(path), old, new)
    ask = {"Created": "Create", "Wrote": "Overwrite", "Edited": "Edit"}.get(verb, verb)
    later = runs_later(ctx.root.resolve(), path)
    if later is not None and later[0]:
        return ToolOutput(f"error: {later[1]}; nothing was written.", is_error=True)
    raw: dict[str, Any] = {"path": rel, "danger": later[1]} if later else {"path": rel}
    refusal = await ctx.ask_permission(f"{ask} {rel}", "edit", raw, "edit", later is not None, [diff])
    if refusal:
        return ToolOutput(refusal, is_error=True)
    notes: list[str] = []
    async with lock_for(path):
        base, content = old, new
        for attempt in range(WRITE_ATTEMPTS):
            current = await read_current(ctx, path)
            if current != base:
                if redo is None or current is None:
                    what = "was deleted" if current is None else "was created" if base is None else "changed"
                    return ToolOutput(f"{ask} of {rel} was not applied: the "
                                      f"file {what} since this call read it (another session or program wrote it); "
                                      "nothing was written. Read it again before changing it.", is_error=True)
                try:
                    content = redo(current)
                except ToolFailure as exc:
                    return ToolOutput(f"Edit of {rel} was not applied: the file changed since this call read it, "
                                      f"and the edit no longer fits: {exc}", is_error=True)
                base = current
                if not notes:
                    notes.append("the file had changed since it was read; the edit was applied to its current text")
            await ctx.checkpoint(path, base)
            outcome = await ctx.host.write_text(path, content, previous=base)
            if not outcome.conflict:
                break
            await anyio.sleep(random.uniform(0, 0.005 * (attempt + 1)))  # another process is writing it too
        else:
            return ToolOutput(f"{ask} of {rel} was not applied: the file kept changing on disk while it was being "
                              f"written ({WRITE_ATTEMPTS} attempts); nothing was written", is_error=True)
    if not outcome.applied:
        return ToolOutput(f"{ask} of {rel} was not applied: {outcome.message or 'the user rejected this edit'}",
                          is_error=True)
    if outcome.message:
        notes.append(outcome.message)
    if base is not old:
        diff = events.diff_content(str(path), base, content)
    if ctx.reads is not None:
        ctx.reads.saw(path, content)
    if ctx.changed is not None:
        ctx.changed(path, content)
    summary = change_summary(base, content)
    extra = "".join(f"; {note}" for note in notes)
    text = f"{verb} {rel} ({summary}{extra})"
    if ctx.profile.guarded_writes and base is not None:  # it otherwise goes on "improving" a finished change (placed first:
        text += " " + advice.DONE  # it repeats what comes last in its answer; a new file needs no such advice)
    if base is not None:
        text += "\n" + overwrite.unified(base, content, rel)
    return ToolOutput(text, content=[diff], locations=[events.location(str(path))])


def change_summary(old: str | None, new: str) -> str:
    if old is None:
        return f"created, {len(new.splitlines())} lines"
    added = removed = 0
    for line in difflib.ndiff(old.splitlines(), new.splitlines()):
        if line.startswith("+ "):
            added += 1
        elif line.startswith("- "):
            removed += 1
    return f"+{added} -{removed} lines"


