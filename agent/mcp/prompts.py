"""MCP prompts as slash commands: ``/<prompt> <arguments>`` expands into the prompt's messages.

A prompt is named by its own name (``/review``), or ``/<server>:<prompt>`` when that name is taken (by a
built-in command or another server's prompt). Arguments: text without ``name=value`` words is all of the
one argument (or of the one required argument); otherwise ``name=value`` words (quote values with spaces)
set arguments by name, and bare words fill the others in their declared order.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import naming
from .results import content_parts

if TYPE_CHECKING:
    from .manager import McpManager


class PromptArgumentError(ValueError):
    """The arguments given do not fit the prompt; the message says what it takes."""


@dataclass(frozen=True)
class PromptCommand:
    name: str  # without the slash
    server: str
    prompt: Any  # the MCP Prompt

    @property
    def arguments(self) -> list[Any]:
        return list(self.prompt.arguments or [])

    def usage(self) -> str:
        args = " ".join(f"{a.name}=…" if a.required else f"[{a.name}=…]" for a in self.arguments)
        return f"/{self.name}{' ' + args if args else ''}"

    def available(self) -> dict[str, Any]:
        """An ACP ``AvailableCommand``."""
        description = (self.prompt.description or self.prompt.title or self.prompt.name).strip()
        command: dict[str, Any] = {"name": self.name, "description": f"{description} (MCP prompt of {self.server})"}
        if self.arguments:
            hint = self.arguments[0].description or self.arguments[0].name if len(self.arguments) == 1 \
                else " ".join(f"{a.name}=…" for a in self.arguments)
            command["input"] = {"hint": hint}
        return command


def commands(manager: McpManager | None, taken: set[str]) -> list[PromptCommand]:
    """The prompts of every ready server, named so none shadows a built-in command or another prompt."""
    out: list[PromptCommand] = []
    if manager is None:
        return out
    used = set(taken)
    for conn in manager.connections:
        if conn.state != "ready":
            continue
        for prompt in conn.prompts:
            name = naming.command_name(conn.spec.name, prompt.name, used)
            used.add(name)
            out.append(PromptCommand(name, conn.spec.name, prompt))
    return out


def find(manager: McpManager | None, name: str, taken: set[str]) -> PromptCommand | None:
    return next((c for c in commands(manager, taken) if c.name == name), None)


def parse_arguments(command: PromptCommand, text: str) -> dict[str, str]:
    declared = command.arguments
    text = text.strip()
    values: dict[str, str] = {}
    required = [a for a in declared if a.required]
    named = any(word.partition("=")[0] in {a.name for a in declared} for word in text.split() if "=" in word)
    if len(declared) == 1 and not named:
        if text:
            values[declared[0].name] = text
    elif len(required) == 1 and not named:  # plain text: all of it is the one required argument
        if text:
            values[required[0].name] = text
    elif declared and text:
        try:
            words = shlex.split(text)
        except ValueError as exc:
            raise PromptArgumentError(f"/{command.name}: {exc}; usage: {command.usage()}") from None
        names = [a.name for a in declared]
        positional = []
        for word in words:
            key, sep, value = word.partition("=")
            if sep and key in names:
                values[key] = value
            else:
                positional.append(word)
        free = [n for n in names if n not in values]
        if len(positional) > len(free):
            raise PromptArgumentError(f"/{command.name}: too many arguments; usage: {command.usage()}")
        values.update(zip(free, positional, strict=False))
    missing = [a.name for a in declared if a.required and not values.get(a.name)]
    if missing:
        raise PromptArgumentError(f"/{command.name} needs {', '.join(missing)}; usage: {command.usage()}")
    return values


async def expand(manager: McpManager, command: PromptCommand, text: str) -> list[dict[str, Any]]:
    """The prompt's messages as ACP content blocks (the assistant's lines marked as such)."""
    conn = manager.connection(command.server)
    if conn is None:
        raise PromptArgumentError(f"the MCP server {command.server!r} is gone")
    result = await conn.get_prompt(command.prompt.name, parse_arguments(command, text))
    blocks: list[dict[str, Any]] = []
    for message in result.messages:
        _, shown = content_parts([message.content])
        for block in shown:
            if message.role == "assistant" and block.get("type") == "text":
                block = {"type": "text", "text": f"(assistant) {block['text']}"}
            blocks.append(block)
    return blocks or [{"type": "text", "text": f"(the prompt /{command.name} is empty)"}]
