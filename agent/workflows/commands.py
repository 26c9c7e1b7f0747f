"""Custom slash commands from files: Claude Code's Markdown commands and Gemini CLI's TOML ones
(docs/workflows.md, "Custom slash commands").

``/name args`` becomes the command's body with its arguments put in: ``$ARGUMENTS`` (all of the text after
the name), ``$1`` ... ``$9`` (its words, split as a shell would), and ``{{args}}`` in a TOML command. Each
placeholder is replaced once, left to right, so an argument that itself contains ``$1`` stays as typed.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import frontmatter, scan
from ..data_files import BadData, toml_table
from .skills import Skill

# The faces' own commands: a file of the same name never replaces one (server/acp/commands.py).
RESERVED = frozenset({"compact", "undo", "rewind", "model", "context", "help", "memory"})
NAME_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_MARKDOWN = re.compile(r"\$(ARGUMENTS|[1-9])")
_TOML = re.compile(r"\{\{args\}\}")
MAX_BODY = 100_000


@dataclass(frozen=True)
class CustomCommand:
    name: str  # without the slash; subfolders joined with ":"
    description: str
    hint: str | None
    body: str
    path: Path
    scope: str  # "workspace" or "user"
    style: str  # "markdown", "toml" or "skill"
    model: str | None = None
    allowed_tools: tuple[str, ...] = ()
    skill: Skill | None = None  # style "skill": expanded by the skill itself, never as a command

    def available(self) -> dict[str, object]:
        """As an ACP ``AvailableCommand``."""
        out: dict[str, object] = {"name": self.name, "description": self.description}
        if self.hint:
            out["input"] = {"hint": self.hint}
        return out

    def listing(self) -> dict[str, object]:
        """As the LSP face's ``agent/listCommands`` lists it."""
        return {"name": self.name, "description": self.description, "argumentHint": self.hint,
                "kind": "skill" if self.style == "skill" else "command", "scope": self.scope,
                "path": str(self.path)}

    def expand(self, arguments: str) -> str:
        if self.skill is not None:
            return self.skill.loaded(arguments)
        if self.style == "toml":
            return toml_expand(self.body, arguments)
        return markdown_expand(self.body, arguments)


def words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unbalanced quote: plain whitespace split
        return arguments.split()


def markdown_expand(body: str, arguments: str) -> str:
    """Claude Code's rules: ``$ARGUMENTS``, ``$1``..``$9``; with neither in the body, the arguments are
    appended as ``ARGUMENTS: ...``."""
    arguments = arguments.strip()
    if not _MARKDOWN.search(body):
        return f"{body.rstrip()}\n\nARGUMENTS: {arguments}" if arguments else body
    split = words(arguments)

    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return split[index] if index < len(split) else ""

    return _MARKDOWN.sub(one, body)


def toml_expand(prompt: str, arguments: str) -> str:
    """Gemini CLI's rules: ``{{args}}``; without it, the arguments are appended after a blank line."""
    arguments = arguments.strip()
    if not _TOML.search(prompt):
        return f"{prompt.rstrip()}\n\n{arguments}" if arguments else prompt
    return _TOML.sub(lambda _: arguments, prompt)


def _name(parts: tuple[str, ...]) -> str | None:
    return ":".join(parts) if parts and all(NAME_PART.match(p) for p in parts) else None


def parse_markdown(folder: scan.Folder, path: Path, name: str) -> CustomCommand:
    fields, body = frontmatter.split(scan.read(folder, path))
    body = body.strip()
    if not body:
        raise frontmatter.BadFrontMatter("the command has no body (nothing after the front matter)")
    description = frontmatter.text_field(fields, "description") or _first_line(body)
    return CustomCommand(name=name, description=description, hint=frontmatter.text_field(fields, "argument-hint"),
                         body=body[:MAX_BODY], path=path, scope=folder.scope, style="markdown",
                         model=frontmatter.text_field(fields, "model", 200),
                         allowed_tools=frontmatter.word_list(fields, "allowed-tools"))


def parse_toml(folder: scan.Folder, path: Path, name: str) -> CustomCommand:
    data = toml_table(scan.read(folder, path))
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise frontmatter.BadFrontMatter("a TOML command needs a 'prompt' string")
    description = frontmatter.text_field(data, "description") or _first_line(prompt)
    return CustomCommand(name=name, description=description, hint=None, body=prompt.strip()[:MAX_BODY], path=path,
                         scope=folder.scope, style="toml")


def _first_line(text: str) -> str:
    line = next((ln.strip().lstrip("#").strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= 100 else line[:99] + "…"


def folders(workspace: Path | None, user: Path) -> list[tuple[scan.Folder, str]]:
    """Every command folder with its file suffix, in precedence order (the first of a name wins)."""
    out: list[tuple[scan.Folder, str]] = []
    if workspace is not None:
        for sub, suffix in ((".agentls/commands", ".md"), (".claude/commands", ".md"), (".gemini/commands", ".toml")):
            out.append((scan.Folder(workspace / sub, "workspace", workspace), suffix))
    for suffix in (".md", ".toml"):
        out.append((scan.Folder(user / "commands", "user", None), suffix))
    return out


class CommandFiles:
    """The command files of a workspace and of the user, read again when they change (``load``)."""

    def __init__(self, workspace: Path | None, user: Path) -> None:
        self._folders = folders(workspace, user)
        self._cache: scan.FileCache[CustomCommand | str] = scan.FileCache()

    def load(self) -> tuple[dict[str, CustomCommand], list[str]]:
        """``(commands by name, problems)``: a bad file is a problem naming it, never an exception."""
        commands: dict[str, CustomCommand] = {}
        problems: list[str] = []
        seen: set[Path] = set()
        for folder, suffix in self._folders:
            for parts, path in scan.walk(folder, suffix, problems):
                seen.add(path)
                name = _name(parts)
                if name is None:
                    problems.append(f"{path}: not a usable command name (letters, digits, '_', '-', '.'); skipped")
                    continue
                parser = parse_toml if suffix == ".toml" else parse_markdown
                got = self._cache.get(path, functools.partial(_parsed, parser, folder, path, name))
                if isinstance(got, str):
                    problems.append(got)
                elif name in RESERVED:
                    problems.append(f"{path}: /{name} is a built-in command, which is kept; this file is not used")
                elif name not in commands:
                    commands[name] = got
        self._cache.keep_only(seen)
        return commands, problems


def _parsed(parser: Callable[[scan.Folder, Path, str], CustomCommand], folder: scan.Folder, path: Path,
            name: str) -> CustomCommand | str:
    try:
        return parser(folder, path, name)
    except (OSError, BadData) as exc:
        return f"{path}: skipped: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}"
