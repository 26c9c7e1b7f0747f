"""Context management: root context files, subdirectory hints, token estimates, the compressor."""

from .compress import CompressionResult, Compressor
from .files import load_root_context
from .hints import HintTracker, paths_in_command
from .prompt import build_system_prompt
from .tokens import context_window_for, estimate_messages, estimate_text

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
