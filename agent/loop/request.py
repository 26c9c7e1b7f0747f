"""Request assembly: the stored transcript as the model sees it for one call, built without deep copies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentls.agent.loop.state import TurnState
from agentls.agent.providers.base import ProviderRequest
from agentls.agent.tools.guards import READ_FIRST
from agentls.agent.types import Message

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent


def _with_text(message: Message, extra: str) -> Message:
    copy: Message = dict(message)  # type: ignore[assignment]
    content = copy.get("content")
    if isinstance(content, list):
        copy["content"] = [*content, {"type": "text", "text": extra}]
    else:
        copy["content"] = f"{content or ''}\n\n{extra}" if content else extra
    return copy


def view(agent: AIAgent, turn: TurnState, extra_user: str | None = None,
         extra_messages: list[Message] | None = None) -> list[Message]:
    """The messages to send: runtime context rides on a copy of this turn's user message; an ephemeral
    instruction (nudge, grace, continuation) rides at the end. The stored transcript is untouched."""
    messages: list[Message] = agent.messages
    if turn.runtime_context and 0 <= turn.user_index < len(messages):
        if turn.user_copy is None:
            turn.user_copy = _with_text(messages[turn.user_index], turn.runtime_context)
        messages = [*messages[: turn.user_index], turn.user_copy, *messages[turn.user_index + 1:]]
    if extra_messages:
        messages = [*messages, *extra_messages]
    if extra_user:
        if messages and messages[-1].get("role") == "user":
            messages = [*messages[:-1], _with_text(messages[-1], extra_user)]
        else:
            messages = [*messages, {"role": "user", "content": extra_user}]
    return messages


def _tool_choice(agent: AIAgent, turn: TurnState, tools: bool) -> str | None:
    """"none" once the loop guard stopped tools; "required" (tool_mode json only) right after a change refused
    for want of a read (the refusal showed the file) or for breaking Python syntax: a small model otherwise
    gives up, or claims the change, instead of sending a better one."""
    if not tools:
        return None
    if turn.outcome.tools_stopped:
        return "none"
    last = agent.messages[-1] if agent.messages else None
    if last is not None and last.get("role") == "tool" and str(last.get("content", "")).startswith(READ_FIRST) \
            and agent.json_tool_mode:
        return "required"
    return None


def build(agent: AIAgent, turn: TurnState, *, model: str, tools: bool = True, extra_user: str | None = None,
          extra_messages: list[Message] | None = None, purpose: str = "turn",
          paths: list[str] | None = None) -> ProviderRequest:
    schemas = agent.tool_schemas() if tools else []
    return ProviderRequest(
        model=model,
        system=agent.system_prompt or "",
        messages=view(agent, turn, extra_user, extra_messages),
        tools=schemas,
        stream=agent.stream,
        max_tokens=agent.max_tokens,
        temperature=agent.temperature,
        tool_choice=_tool_choice(agent, turn, tools),
        cache=agent._wire_cache,
        purpose=purpose,
        paths=paths,
    )
