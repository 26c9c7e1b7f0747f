"""What the user is looking at, as a bounded block on their prompt: the active file and the selection.

Clients send it with a prompt when the user asks them to (the VS Code panel's toggle, Neovim's
``:'<,'>AgentAsk``), as the ``context`` of ``agent/turn``:

    {"activeFile": {"path": "/abs/app.py" | "file:///abs/app.py", "languageId"?: "python",
                    "cursor"?: {"line": 11, "character": 4}},
     "selection": {"path": ..., "languageId"?: ..., "text": "...",
                   "range": {"start": {"line": 9, "character": 0}, "end": {"line": 13, "character": 0}}}}

Positions are LSP's: 0-based lines and characters. The block rides on the user's message and is kept
with it (a follow-up like "now rename it there" still knows what "there" is); replays show the prompt
without it (``strip``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .paths import display
from .prompt_blocks import bounded

MAX_SELECTION_CHARS = 20_000
OPEN, CLOSE = "<editor_context>", "</editor_context>"
_BLOCK = re.compile(r"\s*" + re.escape(OPEN) + r".*?" + re.escape(CLOSE) + r"\s*", re.DOTALL)


class ContextError(ValueError):
    """The client's ``context`` is malformed; the message names the field."""


def _path(value: Any, where: str, root: Path) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ContextError(f"{where}.path must be a non-empty string (a path or a file URI)")
    text = unquote(urlparse(value).path) if value.startswith("file:") else value
    path = Path(text)
    if not path.is_absolute():
        path = root / path
    return display(root, path) if path == root or root in path.parents else str(path)


def _position(value: Any, where: str) -> tuple[int, int]:
    if not isinstance(value, dict):
        raise ContextError(f"{where} must be an object {{line, character}}")
    line, char = value.get("line"), value.get("character", 0)
    if not isinstance(line, int) or isinstance(line, bool) or line < 0 or not isinstance(char, int) \
            or isinstance(char, bool) or char < 0:
        raise ContextError(f"{where} must have non-negative integers 'line' and 'character'")
    return line, char


def _language(value: dict[str, Any]) -> str:
    lang = value.get("languageId")
    return lang if isinstance(lang, str) and re.fullmatch(r"[\w.+#-]{1,40}", lang) else ""


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def render(context: Any, root: Path) -> str | None:
    """The block for ``context`` (None when it holds nothing). Raises ContextError when it is malformed."""
    if context is None:
        return None
    if not isinstance(context, dict):
        raise ContextError("context must be an object {activeFile?, selection?}")
    parts: list[str] = []
    active = context.get("activeFile")
    if active is not None:
        if not isinstance(active, dict):
            raise ContextError("context.activeFile must be an object {path, languageId?, cursor?}")
        where = _path(active.get("path"), "context.activeFile", root)
        lang = _language(active)
        line = f"The user's active file in the editor: {where}" + (f" ({lang})" if lang else "")
        if active.get("cursor") is not None:
            row, col = _position(active["cursor"], "context.activeFile.cursor")
            line += f", cursor at line {row + 1}, column {col + 1}"
        parts.append(line + ".")
    selection = context.get("selection")
    if selection is not None:
        if not isinstance(selection, dict):
            raise ContextError("context.selection must be an object {path, range, text, languageId?}")
        where = _path(selection.get("path"), "context.selection", root)
        text = selection.get("text")
        if not isinstance(text, str):
            raise ContextError("context.selection.text must be a string")
        rng = selection.get("range")
        if not isinstance(rng, dict):
            raise ContextError("context.selection.range must be an object {start, end}")
        (l1, c1), (l2, c2) = _position(rng.get("start"), "context.selection.range.start"), \
            _position(rng.get("end"), "context.selection.range.end")
        if (l2, c2) < (l1, c1):
            (l1, c1), (l2, c2) = (l2, c2), (l1, c1)
        last = l2 - 1 if c2 == 0 and l2 > l1 else l2  # a selection ending at column 0 ends on the line before
        lines = f"line {l1 + 1}" if last == l1 else f"lines {l1 + 1}-{last + 1}"
        if text.strip():
            shown = bounded(text, MAX_SELECTION_CHARS)
            fence = _fence(shown)
            parts.append(f"The user's selection in {where}, {lines} (from line {l1 + 1}, column {c1 + 1} to line "
                         f"{l2 + 1}, column {c2 + 1}):\n{fence}{_language(selection)}\n{shown}\n{fence}")
        else:
            parts.append(f"The user's selection in {where} is empty ({lines}).")
    if not parts:
        return None
    return f"{OPEN}\n" + "\n".join(parts) + f"\n{CLOSE}"


def with_context(prompt: Any, block: str | None) -> Any:
    """The prompt (a string or ACP content blocks) with the block after it."""
    if not block:
        return prompt
    if isinstance(prompt, str):
        return f"{prompt}\n\n{block}"
    if isinstance(prompt, list):
        return [*prompt, {"type": "text", "text": block}]
    return prompt


def strip(text: str) -> str:
    """A user message's text without its editor context (for replays and titles)."""
    return _BLOCK.sub("\n\n", text).strip() if OPEN in text else text
