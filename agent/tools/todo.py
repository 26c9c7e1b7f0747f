"""todo: replaces the plan, which the editor shows as a ``plan`` update."""

from __future__ import annotations

from .. import events
from .base import JsonObject, Tool, ToolContext, ToolFailure, ToolOutput

STATUSES = ("pending", "in_progress", "completed")
_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


async def todo(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    items = args.get("items")
    if not isinstance(items, list):
        raise ToolFailure("'items' must be a list of {content, status}")
    entries = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            raise ToolFailure(f"items[{i}] needs a 'content' string")
        status = item.get("status", "pending")
        if status not in STATUSES:
            raise ToolFailure(f"items[{i}].status must be one of {', '.join(STATUSES)}")
        entries.append({"content": item["content"], "status": status, "priority": item.get("priority", "medium")})
    ctx.set_plan(entries)
    await ctx.send_update(events.plan(entries))
    lines = [f"{_MARK[e['status']]} {e['content']}" for e in entries]
    done = sum(e["status"] == "completed" for e in entries)
    return ToolOutput(f"Plan updated ({done}/{len(entries)} done):\n" + "\n".join(lines))


TODO = Tool(
    name="todo",
    description="Replace the task plan shown to the user. Use it for multi-step work: list the steps, mark one "
                "in_progress at a time, and mark steps completed as you finish them.",
    parameters={"type": "object", "properties": {"items": {"type": "array", "items": {
        "type": "object", "properties": {
            "content": {"type": "string"},
            "status": {"type": "string", "enum": list(STATUSES)},
            "priority": {"type": "string", "enum": ["high", "medium", "low"]}},
        "required": ["content", "status"]}}},
        "required": ["items"], "additionalProperties": False},
    kind="think", run=todo, read_only=False, plan_safe=True, title=lambda a: "Update plan",
    short="Set the task plan.", small_offered=False,
    guide="For multi-step work, keep a short plan with `todo` and update it as you go.",
)
