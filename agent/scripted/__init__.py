"""A scripted model provider: a real local HTTP server speaking OpenAI and Anthropic wire formats.

Every test and benchmark uses it as the model provider. See ``docs/scripted-provider.md``.
"""

from agentls.agent.scripted.replies import (
    RecordedRequest,
    Reply,
    Responder,
    ToolCallSpec,
    call,
    cut_stream,
    empty,
    error,
    invalid_json,
    malformed_sse,
    reset,
    stall,
    text,
    tools,
    truncated,
)
from agentls.agent.scripted.recorded import replay
from agentls.agent.scripted.server import ScriptedServer

__all__ = [
    "RecordedRequest", "Reply", "Responder", "ScriptedServer", "ToolCallSpec", "call", "cut_stream", "empty",
    "error", "invalid_json", "malformed_sse", "replay", "reset", "stall", "text", "tools", "truncated",
]
