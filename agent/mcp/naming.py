"""Tool names: ``mcp__<server>__<tool>``, within every provider's rules, never colliding.

OpenAI and Anthropic both take ``^[a-zA-Z0-9_-]{1,64}$``. Other characters become ``_``; a name over 64
characters, or one already taken (two names that only differ in a replaced character), is cut and ends
with ``_`` and 8 hex digits of a hash of the real server and tool names, so it stays stable across
restarts and sessions.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container

MAX_LENGTH = 64
PREFIX = "mcp__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def safe(part: str) -> str:
    return _UNSAFE.sub("_", part) or "_"


def _hashed(base: str, server: str, tool: str, salt: int) -> str:
    digest = hashlib.sha256(f"{server}\0{tool}\0{salt}".encode()).hexdigest()[:8]
    return base[: MAX_LENGTH - 9] + "_" + digest


def tool_name(server: str, tool: str, taken: Container[str] = ()) -> str:
    """The model-facing name of ``tool`` of ``server``; ``taken`` holds the names already given out."""
    base = f"{PREFIX}{safe(server)}__{safe(tool)}"
    if len(base) <= MAX_LENGTH and base not in taken:
        return base
    salt = 0
    name = _hashed(base, server, tool, salt)
    while name in taken:
        salt += 1
        name = _hashed(base, server, tool, salt)
    return name


def command_name(server: str, prompt: str, taken: Container[str] = ()) -> str:
    """A slash command for an MCP prompt: the prompt's name, or ``server:prompt`` when that is taken."""
    plain = safe(prompt).lower()
    if plain not in taken:
        return plain
    qualified = f"{safe(server).lower()}:{plain}"
    n = 2
    name = qualified
    while name in taken:
        name = f"{qualified}{n}"
        n += 1
    return name
