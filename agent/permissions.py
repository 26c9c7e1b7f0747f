"""The approval policy: what may run without asking, what must ask, and what "always" remembers.

Modes: ``ask`` (writes and commands ask), ``auto-edit`` (edits go through, commands ask), ``yolo``
(nothing asks). Clearly dangerous commands always ask, even in yolo, unless ``allow_dangerous``;
"always" answers never cover them, and are remembered only for the session that gave them. Running a
command again outside the OS sandbox after the sandbox denied it always asks (an "always" answer
covers the command's prefix), and is refused when nobody can be asked.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from .danger import dangerous_reason
from .host import PermissionOption

if TYPE_CHECKING:
    from .tools.base import Tool

__all__ = ["Decision", "PermissionPolicy", "command_key", "dangerous_reason", "options_for", "remembered_key",
           "runs_in_plan_mode", "what_it_is"]

Decision = Literal["allow", "ask", "deny"]

# An MCP tool's key is "mcp:<server>/<tool>" (agent/mcp/tools.py); "always allow" also exists for the server.
MCP_PREFIX = "mcp:"
ALLOW_SERVER = "allow_always_server"


def _server_scope(key: str) -> str | None:
    if not key.startswith(MCP_PREFIX) or "/" not in key:
        return None
    return key[: key.index("/")] + "/*"


def options_for(key: str, dangerous: bool, options: Sequence[PermissionOption]) -> tuple[PermissionOption, ...]:
    """The answers a question offers: no "always" for danger; for an MCP tool, "always" for the tool and for
    every tool of its server."""
    if dangerous:
        return tuple(o for o in options if o.kind != "allow_always")
    if _server_scope(key) is None:
        return tuple(options)
    server = key[len(MCP_PREFIX): key.index("/")]
    out: list[PermissionOption] = []
    for option in options:
        if option.option_id == "allow_always":
            out += [PermissionOption("allow_always", "Always allow this tool", "allow_always"),
                    PermissionOption(ALLOW_SERVER, f"Always allow every tool of {server}", "allow_always")]
        else:
            out.append(option)
    return tuple(out)


def runs_in_plan_mode(tool: Tool) -> bool:
    """Plan mode's one gate: only a tool that changes nothing runs (``read_only`` or ``plan_safe``: reads, listings,
    searches, diagnostics, fetches, the plan itself, read-only MCP tools). Every other call is refused unasked."""
    return tool.read_only or tool.plan_safe


def remembered_key(key: str, option_id: str) -> str:
    """What an answer covers: the server's scope for "always allow every tool of <server>"."""
    scope = _server_scope(key)
    return scope if option_id == ALLOW_SERVER and scope is not None else key


def what_it_is(action: str) -> str:
    """How a refusal names the action: an edit, a fetch, a command, a tool call (an MCP tool's)."""
    return {"edit": "edit", "fetch": "fetch", "execute": "command", "unsandboxed": "command"}.get(action, "tool call")


class PermissionPolicy:
    def __init__(self, mode: str, *, allow_dangerous: bool = False) -> None:
        self.mode = mode
        self.allow_dangerous = allow_dangerous
        self._always_allow: set[str] = set()
        self._always_reject: set[str] = set()

    def decide(self, action: str, key: str, dangerous: bool) -> Decision:
        """``action`` is "edit", "execute", "unsandboxed" (run again outside the OS sandbox after it
        denied the command) or "other" (an MCP tool); ``key`` names what an "always" answer covers
        (``mcp:<server>/<tool>`` is also covered by an "always allow" of ``mcp:<server>/*``)."""
        if dangerous and not self.allow_dangerous:
            return "ask"
        scope = _server_scope(key)
        if key in self._always_reject:
            return "deny"
        if key in self._always_allow or (scope is not None and scope in self._always_allow):
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
