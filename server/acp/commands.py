"""Slash commands: advertised with ``available_commands_update``, run when a prompt starts with one.

Only the names below are commands; any other text starting with ``/`` (a path, say) goes to the model.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agentls.agent import events
from agentls.server.acp import lifecycle, modes

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.server.acp.updates import UpdateSink
    from agentls.server.runtime.live import LiveSession
    from agentls.server.runtime.registry import SessionRegistry

COMMANDS: dict[str, tuple[str, str | None]] = {
    "compact": ("Summarize the conversation so far to free context", "what the summary should focus on"),
    "undo": ("Revert the file edits of the last turn (or of the last N turns)", "number of turns"),
    "model": ("Show the model, or switch to another one for the next turns", "model name"),
    "context": ("Show how much of the context window is in use", None),
    "help": ("List the slash commands", None),
}
_COMMAND = re.compile(r"^/([a-z]+)(?:\s+(.*))?$", re.DOTALL)


def available_commands_update() -> dict[str, Any]:
    commands = []
    for name, (description, hint) in COMMANDS.items():
        command: dict[str, Any] = {"name": name, "description": description}
        if hint:
            command["input"] = {"hint": hint}
        commands.append(command)
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


def parse(blocks: list[dict[str, Any]]) -> tuple[str, str] | None:
    """``(name, argument)`` when the prompt's first block is a known slash command."""
    if not blocks or blocks[0].get("type") != "text":
        return None
    match = _COMMAND.match(str(blocks[0].get("text", "")).strip())
    if match is None or match.group(1) not in COMMANDS:
        return None
    return match.group(1), (match.group(2) or "").strip()


async def run(sessions: SessionRegistry, session: LiveSession, sink: UpdateSink, name: str, arg: str) -> str:
    """Run a command; the answer goes out as ``agent_message_chunk``s. Returns the stop reason."""
    if name == "help":
        lines = [f"- `/{n}{' <' + h + '>' if h else ''}`: {d}" for n, (d, h) in COMMANDS.items()]
        await sink.text("Slash commands:\n" + "\n".join(lines) + "\n")
        return "end_turn"
    agent = await lifecycle.agent(sessions, session)
    if name == "compact":
        await agent.compress(focus=arg or None)  # reported through compaction_update (or its text fallback)
    elif name == "undo":
        await _undo(agent, sink, arg)
    elif name == "model":
        await _model(session, sink, arg)
    elif name == "context":
        await _context(session, agent, sink)
    return "end_turn"


async def _undo(agent: AIAgent, sink: UpdateSink, arg: str) -> None:
    if arg and not arg.isdigit():
        await sink.text(f"`/undo` takes a number of turns, not {arg!r}.\n")
        return
    turns = max(1, int(arg or 1))
    restored = await agent.undo(turns)
    what = "the last turn" if turns == 1 else f"the last {turns} turns"
    if restored:
        await sink.text(f"Reverted the file edits of {what}: {', '.join(restored)}\n")
    else:
        await sink.text(f"Nothing to undo: no file edits were recorded for {what}.\n")


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
    from agentls.agent.context.tokens import estimate_messages

    window = agent.context_window
    used = agent.last_prompt_tokens or estimate_messages(agent.transcript())
    await sink.send(events.usage_update(used, window))
    pct = 100 * used / window if window else 0.0
    lines = [(f"Context: ~{used:,} of {window:,} tokens ({pct:.0f}%) in {len(agent.messages)} messages; "
              f"compaction starts at {agent.compression_threshold:.0%}."), f"Model: `{agent.model}`."]
    if session.mcp_servers:
        names = ", ".join(str(s.get("name", "?")) for s in session.mcp_servers)
        lines.append(f"MCP servers recorded for this session (not started; agentls does not run MCP "
                     f"servers yet): {names}.")
    await sink.text("\n".join(lines) + "\n")
