"""The approval policy: what may run without asking, what must ask, and what "always" remembers.

Modes: ``ask`` (writes and commands ask), ``auto-edit`` (edits go through, commands ask), ``yolo``
(nothing asks). Clearly dangerous commands always ask, even in yolo, unless ``allow_dangerous``;
"always" answers never cover them, and are remembered only for the session that gave them. Running a
command again outside the OS sandbox after the sandbox denied it always asks (an "always" answer
covers the command's prefix), and is refused when nobody can be asked.
"""

from __future__ import annotations

import re
import shlex
from typing import Literal

Decision = Literal["allow", "ask", "deny"]

_FORCE_PUSH = re.compile(r"\bgit\b[^;&|]*\bpush\b[^;&|]*(\s--force(?:-with-lease)?\b|\s-[a-zA-Z]*f[a-zA-Z]*\b|\s\+\S)")
_SSH = re.compile(r"(~|\$HOME|\$\{HOME\}|/root|/home/[^/\s]+)/\.ssh\b")
_OTHER = re.compile(r"\bmkfs(\.\w+)?\b|\bdd\b[^;&|]*\bof=/dev/|:\(\)\s*\{\s*:\|:&\s*\};:|\bshutdown\b|\breboot\b|"
                    r">\s*/dev/sd[a-z]|\bchmod\s+(-R\s+)?0?777\s+/(\s|$)")
_SHELL = re.compile(r"^(ba|z|da|k|fi|c|tc)?sh$")
_INTERPRETER = re.compile(r"^(ba|z|da|k|fi|c|tc)?sh$|^python[0-9.]*$|^perl$|^ruby$|^node$")
_DOWNLOAD = frozenset({"curl", "wget", "fetch"})
# Words that run the rest of the command line: looked through to find the real program.
_WRAPPERS = frozenset({"sudo", "doas", "env", "nohup", "time", "nice", "command", "exec", "xargs", "timeout",
                       "stdbuf", "setsid", "ionice"})
_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "\n", "|&"})
MAX_DEPTH = 4


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|\n")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: judge the words as they stand
        return command.replace(";", " ; ").replace("&&", " && ").replace("|", " | ").split()


def _program(words: list[str]) -> list[str]:
    """The words from the real program on: wrappers, their options and VAR=value assignments skipped."""
    i = 0
    while i < len(words):
        word = words[i]
        name = word.rsplit("/", 1)[-1]
        if name in _WRAPPERS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word) or (i > 0 and word.startswith("-")):
            i += 1
            if name == "timeout" and i < len(words) and re.match(r"^\d", words[i]):
                i += 1
            continue
        break
    return words[i:]


def _outside(target: str, cwd_outside: bool, root: str) -> bool:
    if target in ("/", "*", "..", "~", "-") or target.startswith(("~", "$HOME", "${HOME}", "..")) \
            or "/../" in target or target.endswith("/.."):
        return True
    if target.startswith("/"):
        return not (target == root or target.startswith(root.rstrip("/") + "/"))
    return cwd_outside  # a relative path, after a `cd` out of the workspace


def _analyze(command: str, root: str, depth: int = 0) -> str | None:
    """Walk the command line segment by segment (through `sh -c`, `eval` and wrappers like sudo/env),
    tracking `cd`, so the danger is found however the command is dressed."""
    if depth > MAX_DEPTH:
        return None
    segments: list[tuple[str, list[str]]] = [("", [])]  # (separator before it, words)
    for token in _tokens(command):
        if token in _SEPARATORS:
            segments.append((token, []))
        else:
            segments[-1][1].append(token)
    cwd_outside = False
    downloading = False  # an earlier part of this pipeline downloads something
    for separator, raw_words in segments:
        if separator != "|":
            downloading = False
        words = _program(raw_words)
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        if name in _DOWNLOAD:
            downloading = True
        elif separator == "|" and downloading and _INTERPRETER.match(name):
            return "it pipes a download into a shell"
        elif _SHELL.match(name) or name == "eval":
            inner = " ".join(words[1:]) if name == "eval" else \
                (words[words.index("-c") + 1] if "-c" in words[:-1] else None)
            if inner:
                found = _analyze(inner, root, depth + 1)
                if found:
                    return found
        elif name == "cd":
            cwd_outside = _outside(words[1] if len(words) > 1 else "~", cwd_outside, root)
        elif name == "rm":
            flags = [w for w in words[1:] if w.startswith("-") and not w.startswith("--")]
            recursive = any("r" in f.lower() for f in flags) or "--recursive" in words
            targets = [w for w in words[1:] if not w.startswith("-")]
            if recursive and any(_outside(t, cwd_outside, root) for t in targets):
                return "it deletes recursively outside the workspace"
    return None


def dangerous_reason(command: str, root: str) -> str | None:
    """Why ``command`` is clearly dangerous, or None."""
    found = _analyze(command, root)
    if found:
        return found
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
