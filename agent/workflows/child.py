"""A subagent's view of its parent's workflows (docs/workflows.md, "Subagents"): the parent's hooks, fired
with the child's session id and its parent's session and call; no commands, skills, memory or session
hooks of its own; its end is ``SubagentStop`` instead of ``Stop``."""

from __future__ import annotations

from typing import Any

from .hooks import Hooks
from .session import Send, TurnStart, Workflows


class ChildWorkflows(Workflows):
    """What the loop calls into for a child agent; everything else of ``Workflows`` is its parent's."""

    def __init__(self, parent: Workflows, parent_session_id: str, parent_call_id: str) -> None:
        # Not Workflows.__init__: nothing is read again; the parent's files and problems stay the parent's.
        self.parent = parent
        self.workspace, self.user, self._files = parent.workspace, parent.user, parent._files
        self.skills, self.memory, self.commands = {}, parent.memory, {}
        self._section, self._readable = None, frozenset()  # the child's prompt is CHILD_PROMPT, no skills/memory
        self.hooks = Hooks(parent.hooks.specs, parent.workspace, parent.tell)
        self.hooks.extra = {"parent_session_id": parent_session_id, "parent_tool_use_id": parent_call_id}
        self._untold, self._told, self._send = [], set(), None
        self._session_started = True  # SessionStart is the parent's session's, not a child's

    def attach(self, session_id: str, send: Send) -> None:
        """The child's session id for hook input; what hooks tell the user goes to the parent's ``tell``."""
        self.hooks.session_id = session_id

    async def tell(self, text: str) -> None:
        await self.parent.tell(text)

    def tools(self) -> list[Any]:
        return []

    async def refresh(self) -> dict[str, Any]:
        return {}

    async def begin_turn(self, content: Any, *, resumed: bool) -> TurnStart:
        """The brief as it is: no command expansion, no SessionStart or UserPromptSubmit (the parent's prompt
        already passed them)."""
        return TurnStart(content)

    async def at_stop(self, answer: str, continues: int, event: str = "Stop") -> str | None:
        """A child's end is SubagentStop (exit 2 sends the child on, as Stop does its parent)."""
        return await super().at_stop(answer, continues, "SubagentStop")

    async def subagent_stop(self, answer: str, continues: int) -> str | None:
        return await self.at_stop(answer, continues)
