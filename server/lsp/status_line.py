"""One status line for ``window/showMessage``.

Helix shows a message in its one-line status bar, raw: tabs and newlines come out as garbage, and
anything longer than the window is cut. So every ``showMessage`` the server sends is one short line:
the first paragraph of the text, whitespace collapsed, cut at ``LIMIT`` characters, and "(more in the
log)" when anything was left out. The whole text goes to ``window/logMessage`` (Helix ``:log-open``,
VS Code's Output panel, Neovim ``:LspLog``).
"""

from __future__ import annotations

import re

LIMIT = 150
MORE = " (more in the log)"
_BLANK_LINE = re.compile(r"\n\s*\n")
_FENCE = re.compile(r"(```|~~~)[\w+-]*")  # a code fence and its language: noise on a status line


def _first_paragraph(text: str) -> str:
    for paragraph in _BLANK_LINE.split(text.strip()):
        line = _FENCE.sub(" ", paragraph)
        if line.strip():
            return line
    return ""


def one_line(text: str, limit: int = LIMIT) -> tuple[str, bool]:
    """The status line for ``text``, and whether it leaves anything out."""
    whole = " ".join(text.split())
    line = " ".join(_first_paragraph(text).split())
    if len(line) > limit:
        line = line[:limit - 1].rstrip() + "…"
    return line, line != whole


def status(text: str, limit: int = LIMIT) -> tuple[str, bool]:
    """``one_line`` with "(more in the log)" appended when something was left out."""
    line, cut = one_line(text, limit)
    if not cut:
        return line, False
    return one_line(text, limit - len(MORE))[0] + MORE, True
