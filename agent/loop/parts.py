"""The parts a turn works with. The agent builds them once; the phases use only their public interfaces."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..budget import IterationBudget
from ..compactor import Compactor
from ..conversation import Conversation
from ..host import Host
from ..model_caller import ModelCaller
from ..profile import ModelProfile
from ..titles import Titles
from ..tool_runner import ToolRunner
from ..tool_views import ToolViews
from ..tools.registry import ToolRegistry
from ..turn_control import TurnControl
from ..updates import UpdateSender

if TYPE_CHECKING:
    from ..workflows import Workflows


@dataclass(frozen=True)
class TurnParts:
    conversation: Conversation  # the messages, the system prompt, persistence
    caller: ModelCaller  # model calls: retries, overflow, fallbacks
    compactor: Compactor
    tools: ToolRunner  # one tool call: context, permissions, time limit
    registry: ToolRegistry
    views: ToolViews  # the tools as the model sees them (compact for the local model)
    profile: ModelProfile  # what differs for this model (agent/profile.py): the loop asks it, never a flag
    control: TurnControl  # interrupts and steers from other tasks
    updates: UpdateSender  # to the editor
    titles: Titles
    host: Host
    budget: IterationBudget  # model calls; may be shared with subagents
    budget_shared: bool  # a shared budget is not reset per turn
    max_iterations: int  # model calls per turn for this agent
    trajectory_path: Path | None = None
    workflows: Workflows | None = None  # custom commands, skills, hooks, memory (agent/workflows)
