"""The workflows users bring from other agents: custom slash commands, skills, hooks and memory
(docs/workflows.md). ``Workflows`` (``session.py``) is one session's view of them; the loop and the faces
call into it at a handful of points."""

from .session import Workflows

__all__ = ["Workflows"]
