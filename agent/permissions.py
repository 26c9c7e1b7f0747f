"""The approval policy: what may run without asking, what must ask, and what "always" remembers.

Modes: ``ask`` (writes and commands ask), ``auto-edit`` (edits go through, commands ask), ``yolo``
(nothing asks). Clearly dangerous commands always ask, even in yolo, unless ``allow_dangerous``;
"always" answers never cover them, and are remembered only for the session that gave them.
"""

from __future__ import annotations

import re
import shlex
from typing import Literal

Decision = Literal["allow", "ask", "deny"]

_PIPE_TO_SHELL = re.compile(r"\b(curl|wget|fetch)\b[^|;&]*\|\s*(sudo\s+)?(ba|z|da|k|fi)?sh\b|"
                            r"\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?python[0-9.]*\b")
_FORCE_PUSH = re.compile(r"\bgit\b[^;&|]*\bpush\b[^;&|]*(\s--force(?:-with-lease)?\b|\s-[a-zA-Z]*f[a-zA-Z]*\b|\s\+\S)")
_SSH = re.compile(r"(~|\$HOME|\$\{HOME\}|/root|/home/[^/\s]+)/\.ssh\b")
_OTHER = re.compile(r"\bmkfs(\.\w+)?\b|\bdd\b[^;&|]*\bof=/dev/|:\(\)\s*\{\s*:\|:&\s*\};:|\bshutdown\b|\breboot\b|"
                    r">\s*/dev/sd[a-z]|\bchmod\s+(-R\s+)?0?777\s+/(\s|$)")


def _rm_targets_outside(command: str, root: str) -> bool:
    try:
        words = shlex.split(command, comments=False)
    except ValueError:
        words = command.split()
    for i, word in enumerate(words):
        if word.rsplit("/", 1)[-1] != "rm":
            continue
        args = []
        recursive = False
        for w in words[i + 1:]:
            if w in (";", "&&", "||", "|"):
                break
            if w.startswith("-") and not w.startswith("--"):
                recursive |= "r" in w.lower()
            elif w in ("--recursive",):
                recursive = True
            elif not w.startswith("-"):
                args.append(w)
        if not recursive:
            continue
        for target in args:
            if target in ("/", "*", ".", "..") or target.startswith(("~", "$HOME", "${HOME}", "..")) \
                    or "/../" in target or target.endswith("/.."):
                return True
            if target.startswith("/") and not (target == root or target.startswith(root.rstrip("/") + "/")):
                return True
    return False


def dangerous_reason(command: str, root: str) -> str | None:
    """Why ``command`` is clearly dangerous, or None."""
    if _rm_targets_outside(command, root):
        return "it deletes recursively outside the workspace"
    if _PIPE_TO_SHELL.search(command):
        return "it pipes a download into a shell"
    if _SSH.search(command):
        return "it touches ~/.ssh"
    if _FORCE_PUSH.search(command):
        return "it force-pushes with git"
    if _OTHER.search(command):
        return "it can destroy the system or its disks"
    return None


class PermissionPolicy:
    def __init__(self, mode: str = "ask", *, allow_dangerous: bool = False) -> None:
        self.mode = mode
        self.allow_dangerous = allow_dangerous
        self._always_allow: set[str] = set()
        self._always_reject: set[str] = set()

    def decide(self, action: str, key: str, dangerous: bool) -> Decision:
        """``action`` is "edit" or "execute"; ``key`` names what an "always" answer covers."""
        if dangerous and not self.allow_dangerous:
            return "ask"
        if key in self._always_reject:
            return "deny"
        if key in self._always_allow:
            return "allow"
        if self.mode == "yolo":
            return "allow"
        if self.mode == "auto-edit" and action == "edit":
            return "allow"
        return "ask"

    def unattended(self, action: str, dangerous: bool) -> Decision:
        """What happens when the user cannot be asked: the mode decides; danger is refused."""
        if dangerous and not self.allow_dangerous:
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
