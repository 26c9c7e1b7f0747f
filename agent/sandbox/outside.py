"""What an "always run it outside the sandbox" answer covers: one program, resolved (docs/sandbox.md).

The key is the program's real path, found the way the shell will find it (the command's ``PATH`` and
directory), with its subcommand for the tools that have them (``npm test``, ``python -m pytest``); a
program the sandbox could have rewritten (in the workspace or a writable path) is also pinned by its
content's hash, so a rewrite asks again. Only a command line that is one plain program run qualifies
(tree-sitter-bash): a list, a pipeline, a subshell, a substitution, an assignment before the program,
a redirection anywhere but ``/dev/null`` or another descriptor, a wrapper that runs other code (``sh``,
``env``, ``xargs``, ``sudo``...) or inline code (``python -c``) has no key: it asks every time, and
"always" is not offered for it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

_LANGUAGE = Language(tree_sitter_bash.language())
SUBCOMMANDS = frozenset({"npm", "yarn", "pnpm", "cargo", "go", "make", "git", "uv", "poetry", "python", "python3",
                         "pip", "pip3", "bundle", "mix", "dotnet", "gradle", "mvn", "docker", "kubectl", "deno"})
# Programs whose job is to run other code named in their arguments or input.
WRAPPERS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "csh", "tcsh", "busybox", "env", "xargs", "sudo",
                      "doas", "su", "eval", "exec", "nohup", "timeout", "nice", "ionice", "time", "command",
                      "builtin", "watch", "script", "setsid", "chroot", "unshare", "nsenter", "flock", "stdbuf",
                      "strace", "ltrace", "gdb", "ssh", "find", "parallel", "npx", "uvx", "pipx", "nix-shell",
                      "source", ".", "trap", "bwrap", "sandbox-exec", "systemd-run", "at", "batch", "crontab"})
INLINE = {"python": ("-c",), "python3": ("-c",), "node": ("-e", "--eval", "-p", "--print"), "perl": ("-e", "-E"),
          "ruby": ("-e",), "php": ("-r",), "lua": ("-e",), "deno": ("eval",), "awk": (), "git": ("-c",)}
_PLAIN = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+,:@%=")
_REDIRECT_OK = {"/dev/null"}
MAX_HASHED = 16 << 20  # a writable program larger than this gets no key


def program_key(command: str, cwd: Path, path: str | None, writable: Sequence[Path]) -> str | None:
    """The key of ``command`` (run by ``sh -c`` in ``cwd`` with ``PATH`` = ``path``), or None when no
    "always" may ever cover it."""
    words = _simple_command(command)
    if not words:
        return None
    name = os.path.basename(words[0])
    if name in WRAPPERS or any(w in INLINE.get(name, ()) for w in words[1:]) or name == "awk":
        return None
    program = _resolve(words[0], cwd, path)
    if program is None:
        return None
    key = str(program)
    if any(program == root or root in program.parents for root in writable):
        digest = _digest(program)
        if digest is None:
            return None
        key += f" sha256:{digest}"
    rest = words[1:]
    if name.startswith("python") and rest[:1] == ["-m"] and len(rest) > 1:
        return f"{key} -m {rest[1]}"
    if (name in SUBCOMMANDS or name.startswith("python")) and rest and not rest[0].startswith("-"):
        return f"{key} {rest[0]}"
    return key


def _simple_command(command: str) -> list[str] | None:
    """The words of a command line that is one plain program run, else None."""
    if "\n" in command.strip() or "\\" in command:
        return None
    tree = Parser(_LANGUAGE).parse(command.encode("utf-8", "surrogateescape"))
    root = tree.root_node
    if root.has_error:
        return None
    statements = [c for c in root.named_children if c.type != "comment"]
    if len(statements) != 1 or any(c.type == ";" or c.type == "&" for c in root.children):
        return None
    node = statements[0]
    if node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        redirects = [r for r in node.named_children if (r.start_byte, r.type) != (body.start_byte, body.type)] \
            if body is not None else []
        if body is None or not all(_harmless(r) for r in redirects):
            return None
        node = body
    if node.type != "command" or _has(node, ("command_substitution", "process_substitution", "subshell",
                                              "heredoc_redirect", "herestring_redirect")):
        return None
    words: list[str] = []
    for child in node.named_children:
        if child.type == "file_redirect":
            if not _harmless(child):
                return None
        elif child.type == "command_name":
            text = _text(child)
            if not text or not set(text) <= _PLAIN:
                return None  # $prog, "quoted", globs, ~: only the shell knows what it runs
            words.append(text)
        elif child.type in ("word", "number") or child.type.endswith("string") or child.type == "concatenation":
            words.append(_unquoted(child))
        elif child.type in ("simple_expansion", "expansion"):
            words.append(_text(child))
        else:
            return None  # a variable assignment before the program, and anything unusual
    return words or None


def _harmless(node: Node) -> bool:
    if node.type != "file_redirect":
        return False
    target = node.child_by_field_name("destination")
    if target is None:
        return False
    text = _text(target)
    ops = [c.type for c in node.children if not c.is_named]
    return text in _REDIRECT_OK or (text.isdigit() and any(op in (">&", "<&") for op in ops))


def _has(node: Node, kinds: tuple[str, ...]) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in kinds:
            return True
        stack.extend(current.children)
    return False


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def _unquoted(node: Node) -> str:
    text = _text(node)
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


def _resolve(name: str, cwd: Path, path: str | None) -> Path | None:
    """The real path of the program the shell runs for ``name``, or None (not found, a builtin)."""
    if "/" in name:
        candidate = cwd / name
        found = str(candidate) if os.path.isfile(candidate) and os.access(candidate, os.X_OK) else None
    else:
        found = shutil.which(name, path=path if path is not None else os.environ.get("PATH", os.defpath))
        if found and not os.path.isabs(found):
            found = str(cwd / found)  # a relative PATH entry
    return Path(os.path.realpath(found)) if found else None


def _digest(program: Path) -> str | None:
    try:
        if program.stat().st_size > MAX_HASHED:
            return None
        return hashlib.sha256(program.read_bytes()).hexdigest()[:16]
    except OSError:
        return None
