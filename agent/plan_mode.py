"""Plan mode: only tools that change nothing run; ``exit_plan`` asks the user to approve the plan and pick the
mode to carry it out in (docs/acp.md "Plan mode").

The gate is ``permissions.runs_in_plan_mode`` (one check, in the tool runner), keyed on the tool's
``read_only`` / ``plan_safe`` attributes.
"""

from __future__ import annotations

import re

from . import events
from .host import PermissionOption, PermissionRequest
from .tools.base import JsonObject, Tool, ToolContext, ToolFailure, ToolOutput

PLAN = "plan"
MODES_AFTER = (("ask", "Approve; ask before each edit and command"),
               ("auto-edit", "Approve; apply edits, ask before commands"),
               ("yolo", "Approve; run edits and commands without asking"))
KEEP = PermissionOption("plan", "Keep planning", "reject_once")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)]|\[[ x~]\])\s*")


def refusal(tool_name: str) -> str:
    """The result a tool that would change something gets in plan mode."""
    return (f"error: the session is in plan mode, so {tool_name} did not run: edits and commands are not run "
            "while planning. Read, list and search to work out the plan, write its steps with the todo tool, "
            "then call exit_plan with the plan so the user can approve it and choose how to carry it out.")


def entries(plan: str) -> list[JsonObject]:
    """The plan's lines as ACP plan entries (list markers dropped)."""
    out = []
    for line in plan.splitlines():
        text = _BULLET.sub("", line).strip()
        if text:
            out.append({"content": text[:500], "status": "pending", "priority": "medium"})
    return out[:50]


async def exit_plan(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    plan = args.get("plan")
    if not isinstance(plan, str) or not plan.strip():
        raise ToolFailure("'plan' must be the plan, as text (one step a line)")
    if ctx.set_mode is None:
        raise ToolFailure("this session cannot change its mode")
    if ctx.mode is not None and ctx.mode() != PLAN:  # a second call in the batch, or a model that lost track
        raise ToolFailure(f"the session is not in plan mode (it is in {ctx.mode()!r} mode), so there is no plan to "
                          "approve; carry on with the task")
    steps = entries(plan)
    if steps:
        ctx.set_plan(steps)
        await ctx.send_update(events.plan(steps))
    options = (*(PermissionOption(mode, name, "allow_once") for mode, name in MODES_AFTER), KEEP)
    answer = await ctx.host.request_permission(PermissionRequest(
        tool_call_id=ctx.tool_call_id, title="Approve the plan and leave plan mode?", kind="switch_mode",
        raw_input={"plan": plan}, options=options,
        content=({"type": "content", "content": {"type": "text", "text": plan}},)))
    if answer is None:
        return ToolOutput("The user could not be asked (this client has no permission prompts); the session stays "
                          "in plan mode. Present the plan in your answer; the user can switch the mode themselves.")
    if answer.cancelled or answer.option_id not in {m for m, _ in MODES_AFTER}:
        return ToolOutput("The user did not approve the plan yet; the session stays in plan mode. Ask what to "
                          "change, or refine the plan and call exit_plan again.")
    ctx.set_mode(answer.option_id)
    await ctx.send_update({"sessionUpdate": "current_mode_update", "currentModeId": answer.option_id})
    return ToolOutput(f"The user approved the plan and switched to the {answer.option_id!r} mode. Carry out the "
                      "plan now, step by step, marking the steps with the todo tool.")


EXIT_PLAN = Tool(
    name="exit_plan",
    description="In plan mode: present your finished plan to the user for approval. If they approve, the session "
                "leaves plan mode and you carry the plan out.",
    parameters={"type": "object", "properties": {"plan": {
        "type": "string", "description": "The plan, one step a line."}}, "required": ["plan"],
        "additionalProperties": False},
    kind="switch_mode", run=exit_plan, plan_safe=True, title=lambda a: "Approve the plan", timeout=None,
    short="Ask the user to approve your plan (plan mode).", guide="",
)
