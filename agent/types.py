"""The internal message model: OpenAI-shaped chat messages, stored and persisted as-is.

Providers translate this shape to their wire format and back; nothing else ever changes it.
Fields beyond the OpenAI ones:
- ``reasoning`` / ``reasoning_signature``: the model's thinking (Anthropic needs the signature to replay it);
- ``meta``: agentls bookkeeping (``{"steer": True}``, ``{"summary": True}``, ``{"error": True}``...). Never sent.
- ``provider_data``: what the provider that wrote an assistant message needs back, exactly (``{"wire": ...}``:
  DeepSeek's ``reasoning_content``, Anthropic's thinking blocks with their signatures, the Responses API's
  encrypted reasoning items). Persisted with the message; each provider sends back only its own kind
  (docs/providers.md).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

Role = Literal["system", "user", "assistant", "tool"]
ExitReason = Literal["text_response", "budget_exhausted", "interrupted", "cancelled", "failed", "empty_response"]

# Keys that exist only inside agentls and never reach a provider.
INTERNAL_KEYS = frozenset({"reasoning", "reasoning_signature", "meta", "provider_data"})


class ToolFunction(TypedDict):
    name: str
    arguments: str


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: ToolFunction


class Message(TypedDict, total=False):
    role: Role
    content: str | list[dict[str, Any]] | None
    tool_calls: list[ToolCall]
    tool_call_id: str
    name: str
    reasoning: str
    reasoning_signature: str
    meta: dict[str, Any]
    provider_data: dict[str, Any]


class Usage(TypedDict):
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int


class ErrorInfo(TypedDict):
    category: str
    message: str


# A SessionUpdate as ACP defines it (camelCase keys, ``sessionUpdate`` discriminator).
SessionUpdate = dict[str, Any]


def empty_usage() -> Usage:
    return {"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0}


def add_usage(total: Usage, part: Usage) -> None:
    total["prompt_tokens"] += part["prompt_tokens"]
    total["completion_tokens"] += part["completion_tokens"]
    total["cached_tokens"] += part["cached_tokens"]


def text_of(message: Message) -> str:
    """The plain text of a message's content (text parts joined)."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = [str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(parts)
