"""``delegate_task``: hand a goal (or several, side by side) to child agents and get their reports back
(docs/loop.md §9.9)."""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

import anyio

from .. import events
from ..tools.base import JsonObject, Tool, ToolContext, ToolOutput
from ..types import SessionUpdate, Usage, add_usage, empty_usage
from .child import build_child
from .host import ChildHost
from .report import ChildReport, crashed, from_result, progress_text, result_text
from .tasks import MAX_TASKS, TOOLSETS, Task, parse_tasks

if TYPE_CHECKING:
    from ..agent import AIAgent

log = logging.getLogger("agentls.delegate")
CLOSE_SECONDS = 2.0

DESCRIPTION = (
    "Hand work to subagents that run with their own fresh context and report back. It pays for broad "
    "searches and explorations that would fill your context (\"find every caller of X and how it is used\"), "
    "and for independent sub-questions you can give several subagents at once with 'tasks' (they run side by "
    "side). It does not pay for a single file read or a quick search: do those yourself. A subagent sees "
    "NOTHING of this conversation except its goal and context, so say everything it needs: the files, names "
    "and constraints, and what its answer should contain. 'toolsets' sets what it may use: read (read, list, "
    "search, fetch; the default), edit (+ write and edit files), terminal (commands), mcp (the MCP tools). "
    "You get each subagent's answer and what it really changed. Subagents share this turn's step budget.")

SHORT = "Hand self-contained tasks to subagents with their own context; get their reports."
GUIDE = ("Hand broad explorations and independent sub-questions to `delegate_task` (several at once with "
         "`tasks`); a subagent sees only the goal and context you give it, so make them self-contained.")

_TASK_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "description": "what the subagent should find out or do, self-contained"},
        "context": {"type": "string", "description": "what it needs to know from this conversation"},
        "toolsets": {"type": "array", "items": {"type": "string", "enum": list(TOOLSETS)},
                     "description": "what it may use; default [\"read\"]"}},
    "required": ["goal"], "additionalProperties": False}
PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {**_TASK_SCHEMA["properties"],
                   "tasks": {"type": "array", "items": _TASK_SCHEMA, "maxItems": MAX_TASKS,
                             "description": "several independent tasks run side by side (instead of goal)"}},
    "additionalProperties": False}


def _title(args: JsonObject) -> str:
    tasks = args.get("tasks")
    if isinstance(tasks, list) and tasks:
        return f"Delegate {len(tasks)} tasks"
    goal = args.get("goal")
    return f"Delegate: {goal.splitlines()[0][:60]}" if isinstance(goal, str) and goal.strip() else "Delegate"


class _Run:
    """One delegate_task call: its children, at most ``concurrency`` at a time, and the card's progress."""

    def __init__(self, agent: AIAgent, ctx: ToolContext, tasks: list[Task]) -> None:
        self.agent, self.ctx, self.tasks = agent, ctx, tasks
        self.states = ["waiting"] * len(tasks)
        self.steps = [0] * len(tasks)
        self.reports: list[ChildReport | None] = [None] * len(tasks)

    async def card(self) -> None:
        await self.ctx.send_update(events.tool_call_update(
            self.ctx.tool_call_id, status="in_progress",
            content=[events.text_content(progress_text(self.tasks, self.states))]))

    async def run(self) -> ToolOutput:
        limiter = anyio.CapacityLimiter(max(1, self.agent.settings.delegate_concurrency))
        await self.card()
        async with anyio.create_task_group() as tg:
            for i in range(len(self.tasks)):
                tg.start_soon(self.one, i, limiter)
        reports = [r for r in self.reports if r is not None]
        usage: Usage = empty_usage()
        for r in reports:
            add_usage(usage, r.usage)
        return ToolOutput(result_text(reports, self.ctx.output_limit), is_error=not all(r.ok for r in reports),
                          content=[events.text_content(progress_text(self.tasks, self.states))],
                          raw_output={"children": [r.to_json() for r in reports]}, usage=usage)

    async def one(self, i: int, limiter: anyio.CapacityLimiter) -> None:
        task = self.tasks[i]
        async with limiter:
            self.states[i] = "starting"

            async def on_event(update: SessionUpdate) -> None:
                await self.seen(i, update)

            host = ChildHost(self.ctx.host, self.ctx.send_update, self.ctx.tool_call_id, i + 1, on_event)
            session_id = uuid.uuid4().hex
            try:
                child = build_child(self.agent, task, ctx=self.ctx, host=host)
                session_id = child.session_id
            except Exception as exc:
                log.exception("building a subagent failed")
                failed = self.reports[i] = crashed(i + 1, task, session_id, exc)
                self.states[i] = failed.status()
                return
            try:
                result = await child.run_conversation(task.brief())
                report = from_result(i + 1, task, result, self.steps[i])
            except Exception as exc:  # the parent's turn never fails because of a child
                log.exception("subagent %s failed", session_id)
                report = crashed(i + 1, task, session_id, exc, self.steps[i])
            finally:
                with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_SECONDS):
                    await child.close()
            self.reports[i] = report
            self.states[i] = report.status() + (f": {report.answer.splitlines()[0][:80]}"
                                                if report.ok and report.answer else "")
            await self.card()

    async def seen(self, i: int, update: SessionUpdate) -> None:
        """A child's update: its tool calls move the card on."""
        if update.get("sessionUpdate") == "tool_call":
            self.steps[i] += 1
            self.states[i] = f"step {self.steps[i]}: {update.get('title') or 'a tool call'}"
            await self.card()
        elif update.get("sessionUpdate") == "agent_message_chunk" and not self.states[i].startswith("answering"):
            self.states[i] = "answering"
            await self.card()


def delegate_tool(agent: AIAgent) -> Tool:
    """The tool as ``agent`` offers it (its children are built from ``agent``)."""

    async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
        return await _Run(agent, ctx, parse_tasks(args)).run()

    # plan_safe: in plan mode it runs, and its children (sharing the parent's policy, so its mode) are refused
    # every edit and command by the same gate, whatever their toolsets (docs/acp.md "Plan mode")
    return Tool(name="delegate_task", description=DESCRIPTION, parameters=PARAMETERS, kind="think", run=run,
                read_only=False, plan_safe=True, title=_title, timeout=None, short=SHORT, guide=GUIDE)
