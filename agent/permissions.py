"""The approval policy: what may run without asking, what must ask, and what "always" remembers.

Modes: ``ask`` (writes and commands ask), ``auto-edit`` (edits go through, commands ask), ``yolo``
(nothing asks). Clearly dangerous commands always ask, even in yolo, unless ``allow_dangerous``;
"always" answers never cover them, and are remembered only for the session that gave them. Running a
command again outside the OS sandbox after the sandbox denied it always asks (an "always" answer
covers the command's prefix), and is refused when nobody can be asked.
"""

from __future__ import annotations

import shlex
from typing import Literal

from agentls.agent.danger import dangerous_reason

__all__ = ["Decision", "PermissionPolicy", "command_key", "dangerous_reason"]

Decision = Literal["allow", "ask", "deny"]


class PermissionPolicy:
    def __init__(self, mode: str = "ask", *, allow_dangerous: bool = False) -> None:
        self.mode = mode
        self.allow_dangerous = allow_dangerous
        self._always_allow: set[str] = set()
        self._always_reject: set[str] = set()

    def decide(self, action: str, key: str, dangerous: bool) -> Decision:
        """``action`` is "edit", "execute" or "unsandboxed" (run again outside the OS sandbox after it
        denied the command); ``key`` names what an "always" answer covers."""
        if dangerous and not self.allow_dangerous:
            return "ask"
        if key in self._always_reject:
            return "deny"
        if key in self._always_allow:
            return "allow"
        if action == "unsandboxed":
            return "ask"  # leaving the sandbox is the user's call in every mode, yolo included
        if self.mode == "yolo":
            return "allow"
        if self.mode == "auto-edit" and action == "edit":
            return "allow"
        return "ask"

    def unattended(self, action: str, dangerous: bool) -> Decision:
        """What happens when the user cannot be asked: the mode decides; danger is refused."""
        if (dangerous and not self.allow_dangerous) or action == "unsandboxed":
            return "deny"
        if self.mode == "yolo" or (self.mode == "auto-edit" and action == "edit"):
            return "allow"
        return "deny"

    def remember(self, key: str, option_kind: str, dangerous: bool) -> None:
        if dangerous:
            return
        if option_kind == "allow_always":
            self._always_allow.add(key)
            self._always_reject.discard(key)
        elif option_kind == "reject_always":
            self._always_reject.add(key)
            self._always_allow.discard(key)


def command_key(command: str) -> str:
    """What an "always allow" for a command covers: its program (``pytest``, ``npm test``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if not words:
        return "execute:"
    program = words[0].rsplit("/", 1)[-1]
    if program in ("npm", "yarn", "pnpm", "cargo", "go", "make", "git", "uv", "poetry", "python", "python3") \
            and len(words) > 1 and not words[1].startswith("-"):
        return f"execute:{program} {words[1]}"
    return f"execute:{program}"
