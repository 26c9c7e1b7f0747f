"""One tool call between its hooks: PreToolUse may block it, allow it without a prompt or ask the user;
PostToolUse may add to what the model reads of the result (docs/workflows.md, "Hooks")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..tools.base import Tool, ToolOutput

if TYPE_CHECKING:
    from ..tool_runner import ToolRunner
    from .session import Workflows


async def guarded(workflows: Workflows, runner: ToolRunner, tool: Tool, args: dict[str, Any], call_id: str,
                  run: Callable[[bool], Awaitable[ToolOutput]]) -> ToolOutput:
    """``run(approved)`` between the call's hooks; a blocked call does not run and its result says why."""
    verdict = await workflows.before_tool(tool.name, args, call_id)
    if verdict.blocked is not None:
        return ToolOutput(f"error: a PreToolUse hook blocked this call, so it did not run: {verdict.blocked}",
                          is_error=True)
    if verdict.permission == "ask":
        why = verdict.reason or "a PreToolUse hook asks you to confirm this call"
        refusal = await runner.ask_permission(call_id, f"{tool.title(args) or tool.name} (a hook asks)", "other",
                                              {**args, "danger": why}, f"hook:{tool.name}", True)
        if refusal:
            return ToolOutput(refusal, is_error=True)
    out = await run(verdict.permission in ("allow", "ask"))
    said = await workflows.after_tool(tool.name, args, call_id, out.text, out.is_error)
    return replace(out, text=f"{out.text}\n\n[PostToolUse hook]\n{said}") if said else out
