"""agentls core: the async agent loop, its providers, tools, context and sessions. No editor knowledge."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import __version__

if TYPE_CHECKING:
    from .agent import AIAgent
    from .budget import IterationBudget

__all__ = ["AIAgent", "IterationBudget", "__version__"]


def __getattr__(name: str) -> Any:  # lazy, so `import agent` stays cheap for the faces' startup time
    if name == "AIAgent":
        from .agent import AIAgent

        return AIAgent
    if name == "IterationBudget":
        from .budget import IterationBudget

        return IterationBudget
    raise AttributeError(name)
