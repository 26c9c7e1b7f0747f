"""The provider interface the loop awaits directly."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..types import Message, Usage

ToolSchema = dict[str, Any]  # OpenAI function tool: {"type": "function", "function": {name, description, parameters}}
DeltaCallback = Callable[[str], Awaitable[None]]


@dataclass
class StreamSink:
    """Where streamed deltas go while the loop awaits the complete response."""

    on_text: DeltaCallback | None = None
    on_reasoning: DeltaCallback | None = None


@dataclass
class ProviderRequest:
    model: str
    system: str
    messages: Sequence[Message]  # internal shape, without the system message
    tools: Sequence[ToolSchema] = ()
    stream: bool = True
    max_tokens: int | None = None
    temperature: float | None = None
    # "auto" | "none" | "required"; None lets the provider decide. "text": a plain-text reply with the tools still
    # listed (the prompt's prefix unchanged): "none" natively, no grammar in tool_mode json.
    tool_choice: str | None = None
    # Encoded wire messages the caller can reuse between calls (index-aligned with ``messages``).
    cache: dict[int, Any] | None = None
    # Why the call is made: "turn", "summary", "title", "grace". Sent as ``x-agentls-purpose``.
    purpose: str = "turn"
    # tool_mode "json": the workspace's files, to constrain the ``path`` of reading and editing tools in the
    # grammar (None: unconstrained). Never sent as text.
    paths: Sequence[str] | None = None
    path_tools: Sequence[str] = ()  # the tools whose ``path`` ``paths`` constrains (``Tool.names_existing_file``)
    # tool_mode "json": tools the grammar does not offer this step (they stay listed: the prompt is unchanged).
    held_back: Sequence[str] = ()


@dataclass
class ProviderResponse:
    message: Message  # role "assistant": content, tool_calls, reasoning
    finish_reason: str  # "stop" | "tool_calls" | "length" | "content_filter" | ...
    usage: Usage
    model: str
    raw: dict[str, Any] = field(default_factory=dict)


class Provider(Protocol):
    name: str

    async def complete(self, request: ProviderRequest, sink: StreamSink | None = None) -> ProviderResponse:
        """One model call. Raises ``ProviderError`` (already classified) on any failure."""
        ...

    async def aclose(self) -> None:
        ...
