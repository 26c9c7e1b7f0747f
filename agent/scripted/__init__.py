"""A scripted model provider: a real local HTTP server speaking OpenAI and Anthropic wire formats.

Every test and benchmark uses it as the model provider. See ``docs/scripted-provider.md``.
"""

from .replies import (
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
from .recorded import replay
from .server import ScriptedServer

__all__ = [
    "RecordedRequest", "Reply", "Responder", "ScriptedServer", "ToolCallSpec", "call", "cut_stream", "empty",
    "error", "invalid_json", "malformed_sse", "replay", "reset", "stall", "text", "tools", "truncated",
]
