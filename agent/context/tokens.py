"""Fast token estimates and a table of known context windows.

The estimate is about ``chars / 4`` plus a small per-message overhead. It never encodes JSON:
string lengths are O(1) in CPython, so estimating a 200k-token transcript is a walk over its
messages and nothing more. Reasoning and ``meta`` are not counted (they are never sent as
prompt text); tool-call names and arguments are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..types import Message

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4  # role, separators
TOOL_CALL_OVERHEAD = 8  # id, type, the function wrapper
IMAGE_TOKENS = 765  # a typical high-detail image tile budget
OTHER_PART_TOKENS = 50


def estimate_text(s: str | None) -> int:
    """About how many tokens ``s`` is."""
    if not s:
        return 0
    return (len(s) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _content_chars(content: Any) -> tuple[int, int]:
    """(characters of text, tokens of non-text parts) of a message's content."""
    if content is None:
        return 0, 0
    if isinstance(content, str):
        return len(content), 0
    chars = 0
    extra = 0
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                chars += len(str(part))
                continue
            text = part.get("text")
            if isinstance(text, str):
                chars += len(text)
            elif part.get("type") in ("image_url", "image", "input_image"):
                extra += IMAGE_TOKENS
            else:
                extra += OTHER_PART_TOKENS
    else:
        chars += len(str(content))
    return chars, extra


def estimate_message(message: Message) -> int:
    """About how many prompt tokens one message costs."""
    chars, extra = _content_chars(message.get("content"))
    tokens = MESSAGE_OVERHEAD + extra
    calls = message.get("tool_calls")
    if calls:
        for call in calls:
            fn = call.get("function") or {}
            chars += len(fn.get("name") or "") + len(fn.get("arguments") or "")
            tokens += TOOL_CALL_OVERHEAD
    name = message.get("name")
    if name:
        chars += len(name)
    call_id = message.get("tool_call_id")
    if call_id:
        chars += len(call_id)
    return tokens + (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_messages(messages: Iterable[Message]) -> int:
    """About how many prompt tokens a transcript costs (system prompt included if it is in it)."""
    return sum(estimate_message(m) for m in messages)


def estimate_each(messages: Sequence[Message]) -> list[int]:
    """The per-message estimates, for callers that update a total incrementally."""
    return [estimate_message(m) for m in messages]


# (pattern searched in the lowercased model name without its vendor prefix, window).
# First match wins, so specific entries come before the families they belong to.
_WINDOWS: tuple[tuple[str, int], ...] = (
    (r"gpt-?4\.1", 1_047_576),
    (r"gpt-?4o", 128_000),
    (r"gpt-?4-?turbo|gpt-?4-\d{4}-preview|gpt-?4-1106|gpt-?4-0125", 128_000),
    (r"gpt-?4-?32k", 32_768),
    (r"gpt-?5", 400_000),
    (r"gpt-?4", 8_192),
    (r"gpt-?3\.5-?turbo", 16_385),
    (r"gpt-oss", 131_072),
    (r"^o1-?(mini|preview)", 128_000),
    (r"^o[134](\b|-|$)", 200_000),
    (r"claude.*(sonnet-?4|4-?sonnet).*1m", 1_000_000),
    (r"claude", 200_000),
    (r"gemini-?1\.5-?pro", 2_097_152),
    (r"gemini-?1\.0|gemini-?pro$", 32_760),
    (r"gemini", 1_048_576),
    (r"llama-?3\.[1-3]|llama3\.[1-3]", 131_072),
    (r"llama-?4", 1_048_576),
    (r"llama-?3|llama3", 8_192),
    (r"llama-?2|llama2", 4_096),
    (r"qwen-?2\.5-?coder|qwen2\.5-?coder", 32_768),
    (r"qwen-?3-?coder|qwen3-?coder", 262_144),
    (r"qwen", 32_768),
    (r"deepseek-?coder(?!-?v2)", 16_384),
    (r"deepseek", 128_000),
    (r"codestral", 256_000),
    (r"devstral|mistral-?(large|medium)|ministral|magistral|pixtral", 128_000),
    (r"mistral|mixtral", 32_768),
    (r"command-?r|command-?a", 128_000),
    (r"phi-?4", 16_384),
    (r"phi-?3", 128_000),
    (r"gemma-?3", 131_072),
    (r"gemma", 8_192),
    (r"grok", 131_072),
)
_COMPILED = tuple((re.compile(p), w) for p, w in _WINDOWS)


def context_window_for(model: str, default: int = 128_000) -> int:
    """The context window of ``model`` (vendor prefixes such as ``openai/`` are ignored)."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    name = name.replace("_", "-").replace(" ", "-")
    if not name:
        return default
    for pattern, window in _COMPILED:
        if pattern.search(name):
            return window
    return default
