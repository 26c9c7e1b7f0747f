"""Context management: root context files, subdirectory hints, token estimates, the compressor."""

from agentls.agent.context.compress import CompressionResult, Compressor
from agentls.agent.context.files import load_root_context
from agentls.agent.context.hints import HintTracker, paths_in_command
from agentls.agent.context.prompt import build_system_prompt
from agentls.agent.context.tokens import context_window_for, estimate_messages, estimate_text

__all__ = [
    "CompressionResult",
    "Compressor",
    "HintTracker",
    "build_system_prompt",
    "context_window_for",
    "estimate_messages",
    "estimate_text",
    "load_root_context",
    "paths_in_command",
]
