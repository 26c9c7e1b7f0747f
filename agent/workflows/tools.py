"""The ``skill`` and ``memory`` tools (docs/workflows.md)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import anyio.to_thread

from .. import events
from ..safe_write import lock_for, write_text
from ..tools.base import JsonObject, Tool, ToolContext, ToolFailure, ToolOutput
from ..tools.writing import read_current, write_checked
from .memory import SCOPES, Memory, MemoryError_, changed
from .skills import Skill

SKILL_DESCRIPTION = ("Load a skill: its instructions and the list of its files. The skills there are, with what "
                     "each is for, are listed in the system prompt; call this before doing a task one of them covers.")
MEMORY_DESCRIPTION = ("Remember something for later sessions (the user's preferences, facts about this project), or "
                      "change or forget an entry. Scope 'user' (the default) applies everywhere, 'project' to this "
                      "workspace only. Only when the user asks you to remember something, or it is clearly a lasting "
                      "preference. Keep entries short; it takes effect in the next session.")


def skill_tool(skills: dict[str, Skill]) -> Tool:
    async def run(ctx: ToolContext, args: JsonObject) -> ToolOutput:
        name = args.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ToolFailure("'name' (a skill's name) is required")
        skill = skills.get(name.strip().lstrip("/"))
        if skill is None:
            known = ", ".join(sorted(skills)) or "none"
            raise ToolFailure(f"there is no skill named {name[:80]!r}; the skills are: {known}")
        return ToolOutput(skill.loaded())

    return Tool(name="skill", description=SKILL_DESCRIPTION, kind="read", read_only=True, run=run,
                parameters={"type": "object", "properties": {"name": {"type": "string", "description": "the skill's name"}},
                            "required": ["name"], "additionalProperties": False},
                title=lambda args: f"Skill {args.get('name', '')}")


async def _user_text(path: Path) -> str:
    """The user memory file's text; a file that is not UTF-8 is never rewritten (its bytes would be lost)."""
    if not await anyio.Path(path).exists():
        return ""
    from ..fileio import read_small

    data = await anyio.to_thread.run_sync(read_small, path, 64 * 1024)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise MemoryError_("the file is not UTF-8 text, so it is not rewritten (its other bytes would be lost); "
                           "nothing was written. The user can fix or remove the file") from None


async def _write_user(ctx: ToolContext, path: Path, args: JsonObject) -> str:
    """What was done. Asked like an edit first: in ask mode the user approves it; auto-edit and yolo allow it."""
    old = await _user_text(path)
    new, _ = changed(old, args)
    diff = events.diff_content(str(path), old or None, new)
    refusal = await ctx.ask_permission(f"Edit user memory {path}", "edit", {"path": str(path)}, "edit", False, [diff])
    if refusal:
        raise ToolFailure(refusal)
    async with lock_for(path):
        new, done = changed(await _user_text(path), args)  # again under the lock: it may have changed meanwhile
        await anyio.to_thread.run_sync(lambda: os.makedirs(path.parent, exist_ok=True))
        root = Path(os.path.realpath(path.parent))
        await write_text(root, root / path.name, new)
        return done


def memory_tool(memory: Memory) -> Tool:
    async def run(ctx: ToolContext, args: JsonObject) -> ToolOutput:
        scope = args.get("scope") or "user"
        if scope not in SCOPES:
            raise ToolFailure("'scope' must be 'user' or 'project'")
        try:
            path = memory.path(scope)
            if scope == "user":
                done = await _write_user(ctx, path, args)
            else:
                old = await read_current(ctx, path)
                new, done = changed(old or "", args)
                out = await write_checked(ctx, path, old, new, "Edited" if old is not None else "Created")
                if out.is_error:
                    return out
        except MemoryError_ as exc:
            raise ToolFailure(f"{exc} ({scope} memory, {memory.path(scope) if scope == 'user' else '.agentls/memory.md'})"
                              ) from None
        except OSError as exc:
            raise ToolFailure(f"the {scope} memory ({path}) could not be written: {exc.strerror or exc}") from None
        return ToolOutput(f"Memory entry {done} ({scope} memory, {path}). It takes effect in the next session: the "
                          "instructions of this session do not change.")

    return Tool(name="memory", description=MEMORY_DESCRIPTION, kind="edit", run=run, parameters={
        "type": "object", "properties": {
            "action": {"type": "string", "enum": ["add", "replace", "remove"]},
            "content": {"type": "string", "description": "the entry (add, replace)"},
            "old": {"type": "string", "description": "a part of the entry to replace or remove"},
            "scope": {"type": "string", "enum": list(SCOPES), "description": "user (default) or project"}},
        "required": ["action"], "additionalProperties": False},
        title=lambda args: f"Memory: {args.get('action', '')} ({args.get('scope') or 'user'})")
