"""Slash commands: advertised with ``available_commands_update``, run when a prompt starts with one.

Only the names below, the session's command files and skills (``agentls.agent.workflows``, expanded by the core
when the turn starts) and the prompts of its MCP servers (``agentls.agent.mcp.prompts``) are commands; any other
text starting with ``/`` (a path, say) goes to the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agentls.agent import events
from . import lifecycle, modes

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.agent.mcp.prompts import PromptCommand
    from agentls.agent.workflows.commands import CustomCommand
    from .updates import UpdateSink
    from ..runtime.live import LiveSession
    from ..runtime.registry import SessionRegistry

COMMANDS: dict[str, tuple[str, str | None]] = {
    "compact": ("Summarize the conversation so far to free context", "what the summary should focus on"),
    "undo": ("Revert the file edits of the last turn (or of the last N turns)",
             "number of turns, then 'force' to overwrite files changed since"),
    "rewind": ("Drop the last turn (or the last N) from the conversation and put back the files it changed",
               "number of turns, then 'force' to overwrite files changed since"),
    "model": ("Show the model, or switch to another one for the next turns", "model name"),
    "context": ("Show how much of the context window is in use, and the MCP servers", None),
    "help": ("List the slash commands", None),
    "memory": ("Show what agentls remembers (user and project memory) and where it lives", None),
}
_COMMAND = re.compile(r"^/([A-Za-z0-9_.:-]+)(?:\s+(.*))?$", re.DOTALL)


def custom(session: LiveSession | None) -> list[CustomCommand]:
    """The session's command files and skills (agent/workflows), as they were last read."""
    workflows = session.agent.workflows if session is not None and session.agent is not None else None
    return list(workflows.commands.values()) if workflows is not None else []


def mcp_prompts(session: LiveSession | None) -> list[PromptCommand]:
    """The prompts of the session's ready MCP servers, as commands (never shadowing a built-in one or a file's)."""
    from agentls.agent.mcp.prompts import commands

    return commands(session.mcp if session is not None else None, set(COMMANDS) | {c.name for c in custom(session)})


def available_commands_update(session: LiveSession | None = None) -> dict[str, Any]:
    commands = []
    for name, (description, hint) in COMMANDS.items():
        command: dict[str, Any] = {"name": name, "description": description}
        if hint:
            command["input"] = {"hint": hint}
        commands.append(command)
    commands += [c.available() for c in custom(session)]
    commands += [c.available() for c in mcp_prompts(session)]
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


def parse(blocks: list[dict[str, Any]], names: Iterable[str] = ()) -> tuple[str, str] | None:
    """``(name, argument)`` when the prompt's first block is a built-in command or one of ``names``."""
    if not blocks or blocks[0].get("type") != "text":
        return None
    match = _COMMAND.match(str(blocks[0].get("text", "")).strip())
    if match is None or (match.group(1) not in COMMANDS and match.group(1) not in set(names)):
        return None
    return match.group(1), (match.group(2) or "").strip()


async def mcp_prompt(session: LiveSession, sink: UpdateSink, name: str, arg: str) -> list[dict[str, Any]] | None:
    """An MCP prompt's messages as the turn's prompt; None (after telling the user why) when it cannot be had."""
    from agentls.agent.mcp.connection import Unavailable, describe_error
    from agentls.agent.mcp.prompts import PromptArgumentError, expand, find

    command = find(session.mcp, name, set(COMMANDS))
    if session.mcp is None or command is None:
        await sink.text(f"`/{name}` is no longer available (its MCP server stopped).\n")
        return None
    try:
        return await expand(session.mcp, command, arg)
    except (PromptArgumentError, Unavailable) as exc:
        await sink.text(f"{exc}\n")
    except Exception as exc:
        await sink.text(f"`/{name}`: the MCP server {command.server!r} could not give the prompt: "
                        f"{describe_error(exc)}\n")
    return None


async def run(sessions: SessionRegistry, session: LiveSession, sink: UpdateSink, name: str, arg: str) -> str:
    """Run a command; the answer goes out as ``agent_message_chunk``s. Returns the stop reason."""
    if name == "help":
        lines = [f"- `/{n}{' <' + h + '>' if h else ''}`: {d}" for n, (d, h) in COMMANDS.items()]
        lines += [f"- `/{c.name}{' <' + c.hint + '>' if c.hint else ''}`: {c.description}" for c in custom(session)]
        lines += [f"- `{c.usage()}`: {c.available()['description']}" for c in mcp_prompts(session)]
        await sink.text("Slash commands:\n" + "\n".join(lines) + "\n")
        return "end_turn"
    agent = await lifecycle.agent(sessions, session)
    if name == "compact":
        await agent.compress(focus=arg or None)  # reported through compaction_update (or its text fallback)
    elif name == "undo":
        await _undo(agent, sink, arg)
    elif name == "rewind":
        await sink.text(await rewind_text(agent, arg) + "\n")
    elif name == "model":
        await _model(session, sink, arg)
    elif name == "context":
        await _context(session, agent, sink)
    elif name == "memory":
        workflows = agent.workflows
        await sink.text((workflows.memory.report() if workflows is not None else "Memory is off for this session.")
                        + "\n")
    return "end_turn"


async def _undo(agent: AIAgent, sink: UpdateSink, arg: str) -> None:
    from agentls.agent.rewind import RewindRefused

    words = arg.split()
    force = "force" in words or "--force" in words
    counts = [w for w in words if w not in ("force", "--force")]
    if len(counts) > 1 or (counts and not (counts[0].isascii() and counts[0].isdigit())):
        await sink.text(f"`/undo` takes a number of turns (and `force`), not {arg!r}.\n")
        return
    turns = max(1, int(counts[0]) if counts else 1)
    try:
        restored = await agent.undo(turns, force=force)
    except RewindRefused as exc:
        await sink.text(f"Undo refused: {exc}.\n")
        return
    what = "the last turn" if turns == 1 else f"the last {turns} turns"
    if restored:
        await sink.text(f"Reverted the file edits of {what}: {', '.join(restored)}\n")
    else:
        await sink.text(f"Nothing to undo: no file edits were recorded for {what}.\n")


async def rewind_text(agent: AIAgent, arg: str) -> str:
    """``/rewind [N] [force]`` on either face: what was put back, or why nothing was."""
    from agentls.agent.rewind import RewindRefused

    words = arg.split()
    force = "force" in words or "--force" in words
    counts = [w for w in words if w not in ("force", "--force")]
    if len(counts) > 1 or (counts and not (counts[0].isascii() and counts[0].isdigit())):  # not "²"
        return f"`/rewind` takes a number of turns (and `force`), not {arg!r}."
    try:
        return (await agent.rewind(int(counts[0]) if counts else 1, force=force)).summary()
    except RewindRefused as exc:
        return f"Rewind refused: {exc}."


async def _model(session: LiveSession, sink: UpdateSink, arg: str) -> None:
    if arg:
        await modes.set_model(session, sink, arg, allow_new=True)
        await sink.text(f"Model switched to `{arg}` for the next turns.\n")
        return
    others = [m for m in modes.model_choices(session) if m != modes.current_model(session)]
    text = f"Model: `{modes.current_model(session)}`."
    if others:
        text += " Also available: " + ", ".join(f"`{m}`" for m in others) + "."
    await sink.text(text + " Switch with `/model <name>`.\n")


async def _context(session: LiveSession, agent: AIAgent, sink: UpdateSink) -> None:
    window = agent.context_window
    used = agent.context_used
    await sink.send(events.usage_update(used, window))
    pct = 100 * used / window if window else 0.0
    lines = [(f"Context: ~{used:,} of {window:,} tokens ({pct:.0f}%) in {len(agent.messages)} messages; "
              f"compaction starts at {agent.compression_threshold:.0%}."), f"Model: `{agent.model}`."]
    from agentls.agent.mcp.report import status_lines

    lines += status_lines(session.mcp)
    await sink.text("\n".join(lines) + "\n")
