"""``delegate_task``'s arguments: one goal, or a list of tasks, each checked before any child starts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..mcp.naming import PREFIX as MCP_PREFIX
from ..tools.base import ToolFailure

MAX_TASKS = 8  # more in one call is refused (nothing runs): the model is told to split the work or merge tasks
MAX_BRIEF_CHARS = 100_000  # a goal and its context together
READ_TOOLS = ("read_file", "list_dir", "search_files", "fetch_url", "diagnostics")
TOOLSETS: dict[str, tuple[str, ...]] = {
    "read": READ_TOOLS,
    "edit": (*READ_TOOLS, "write_file", "edit_file"),
    "terminal": ("terminal",),
    "mcp": (),  # every MCP tool of the session (named mcp__<server>__<tool>)
}
DEFAULT_TOOLSETS = ("read",)
_TASK_KEYS = frozenset({"goal", "context", "toolsets"})


@dataclass(frozen=True)
class Task:
    goal: str
    context: str = ""
    toolsets: tuple[str, ...] = DEFAULT_TOOLSETS

    def brief(self) -> str:
        """The child's first user message: all it knows of the parent's conversation."""
        if not self.context:
            return self.goal
        return f"{self.goal}\n\nContext from the agent that delegated this task:\n{self.context}"

    def tool_names(self, available: Iterable[str]) -> list[str]:
        """The tools of ``available`` (the parent's, in its order) the task's toolsets allow."""
        wanted = {n for t in self.toolsets for n in TOOLSETS[t]}
        mcp = "mcp" in self.toolsets
        return [n for n in available if n in wanted or (mcp and n.startswith(MCP_PREFIX))]


def _task(raw: Any, where: str) -> Task:
    if not isinstance(raw, dict):
        raise ToolFailure(f"{where} must be an object with a 'goal' string, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _TASK_KEYS)
    if unknown:
        raise ToolFailure(f"{where} has unknown keys {unknown}; a task has 'goal', 'context' and 'toolsets'")
    goal, context = raw.get("goal"), raw.get("context", "")
    if not isinstance(goal, str) or not goal.strip():
        raise ToolFailure(f"{where}.goal must be a non-empty string saying what the subagent should find or do")
    if context is None:
        context = ""
    if not isinstance(context, str):
        raise ToolFailure(f"{where}.context must be a string")
    if len(goal) + len(context) > MAX_BRIEF_CHARS:
        raise ToolFailure(f"{where}: the goal and context are {len(goal) + len(context):,} characters; at most "
                          f"{MAX_BRIEF_CHARS:,} are accepted. Name the files and the question instead of pasting "
                          "their content: the subagent can read them itself.")
    toolsets = raw.get("toolsets", list(DEFAULT_TOOLSETS))
    if toolsets is None:
        toolsets = list(DEFAULT_TOOLSETS)
    if not isinstance(toolsets, list) or not all(isinstance(t, str) for t in toolsets):
        raise ToolFailure(f"{where}.toolsets must be a list of: {', '.join(TOOLSETS)}")
    bad = [t for t in toolsets if t not in TOOLSETS]
    if bad:
        raise ToolFailure(f"{where}.toolsets: unknown {bad}; choose from {', '.join(TOOLSETS)}")
    return Task(goal.strip(), context.strip(), tuple(dict.fromkeys(toolsets)) or DEFAULT_TOOLSETS)


def parse_tasks(args: dict[str, Any]) -> list[Task]:
    """The tasks of one call: ``{goal, context?, toolsets?}`` or ``{tasks: [...]}`` (not both)."""
    if "tasks" in args:
        if "goal" in args or "context" in args or "toolsets" in args:
            raise ToolFailure("give either 'goal' (one task) or 'tasks' (several), not both")
        tasks = args["tasks"]
        if not isinstance(tasks, list) or not tasks:
            raise ToolFailure("'tasks' must be a non-empty list of {goal, context?, toolsets?}")
        if len(tasks) > MAX_TASKS:
            raise ToolFailure(f"'tasks' has {len(tasks)} entries; at most {MAX_TASKS} are accepted in one call and "
                              "none was started. Merge related tasks, or delegate the rest after these answer.")
        return [_task(t, f"tasks[{i}]") for i, t in enumerate(tasks)]
    if "goal" not in args:
        raise ToolFailure("give 'goal' (one task) or 'tasks' (a list of {goal, context?, toolsets?})")
    return [_task({k: v for k, v in args.items() if k in _TASK_KEYS}, "the task")]
