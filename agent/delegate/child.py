"""A child agent, built from its parent's configuration in one place (docs/loop.md §9.9).

Same workspace, model and endpoints, permission policy (shared: its approval mode, plan mode included, is
the parent's at every call), hooks (agent/workflows/child.py), sandbox settings, session store and MCP
tools as the parent; its own session (linked to the parent's and the delegating call), its own transcript
and system prompt, the tools its task's toolsets allow, and its parent turn's budget.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from ..budget import ChildBudget
from ..tools.base import Tool, ToolContext
from .config import EditTap, ParentLink
from .host import ChildHost
from .tasks import Task

if TYPE_CHECKING:
    from ..agent import AIAgent

CHILD_PROMPT = (
    "You are a subagent: another agent delegated one task to you and is waiting for your answer. You see none "
    "of its conversation, only the task in the first message. Work on your own with the tools you have; do not "
    "ask questions, nobody will answer them. Stay within the task. When you are done, answer with a short report: "
    "what you found (with file paths and line numbers) or what you changed, and anything left undone. That "
    "answer is all the delegating agent will read.")


def build_child(parent: AIAgent, task: Task, *, ctx: ToolContext, host: ChildHost) -> AIAgent:
    """A new, unopened agent for ``task`` (the caller runs and closes it)."""
    from ..agent import AIAgent

    tools: list[Tool] = [t for n in task.tool_names(parent.registry.names) if (t := parent.registry.get(n))]
    extra = parent.settings.system_message
    settings = parent.settings.evolve(titles="prompt", system_message=CHILD_PROMPT + (f"\n\n{extra}" if extra else ""))
    workflows = None
    if parent.workflows is not None:  # the parent's hooks see the child's calls (docs/workflows.md, "Subagents")
        from ..workflows.child import ChildWorkflows

        workflows = ChildWorkflows(parent.workflows, parent.session_id, ctx.tool_call_id)
    link = ParentLink(session_id=parent.session_id, tool_call_id=ctx.tool_call_id, level=parent.level + 1,
                      policy=parent.policy, tap=EditTap(ctx.checkpoint, ctx.changed))
    return AIAgent(settings=settings, host=host, workspace=parent.root, session_id=uuid.uuid4().hex,
                   session_db=parent.store, iteration_budget=ChildBudget(parent.budget), tools=tools,
                   http_client=parent.http_client, parent=link,
                   workflows=workflows)
