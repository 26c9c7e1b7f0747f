"""A round of tool calls the agent makes itself for a small model (the pre-read, the first edit): run like
any tool round (the editor shows the calls, permissions are asked, the transcript keeps them), with the
assistant message marked in ``meta``."""

from __future__ import annotations

import json

from .dispatch import announce, run_calls
from .parts import TurnParts
from .prepare import prepare_calls
from .state import TurnState
from ..outcome import EDIT_TOOLS
from ..types import Message, ToolCall


def calls_of(tool: str, args: list[dict[str, object]], prefix: str) -> list[ToolCall]:
    return [{"id": f"{prefix}_{i}", "type": "function", "function": {"name": tool, "arguments": json.dumps(a)}}
            for i, a in enumerate(args)]


async def agent_round(parts: TurnParts, turn: TurnState, calls: list[ToolCall], meta: dict[str, object]) -> None:
    conversation = parts.conversation
    messages = conversation.messages
    message: Message = conversation.call_ids.assign(
        {"role": "assistant", "content": "", "tool_calls": calls, "meta": meta}, messages)
    prepared = prepare_calls(message.get("tool_calls") or [], parts.registry, truncated=False,
                             parameters=parts.views.parameters)  # as a call of the model would be
    for p in prepared:  # an edit is counted like the model's: a model that copies the agent's failed edit word for
        if p.error is None and p.call["function"]["name"] in EDIT_TOOLS:  # word is stopped one copy sooner
            turn.guard.see(p.call["function"]["name"], p.args, p.call["function"]["arguments"], turn.iterations)
    messages.append({**message, "tool_calls": [p.call for p in prepared]})
    named = await announce(parts, prepared)
    await run_calls(parts, turn, prepared, named)
