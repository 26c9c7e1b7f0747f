"""Text for a human's terminal (``agentls run``'s stdout and stderr, docs/cli.md "Terminal safety"): every
control character but newline and tab is shown (a CRLF ending becomes a newline) as an escape (``\\x1b``, ``\\x07``, ``\\x9b``…), so a file
or an answer holding OSC 0 (title), CSI 2J (clear) or OSC 52 (clipboard write) reaches the terminal as
visible text, never as a command to it. ``--json`` output is left exact (JSON escapes them anyway)."""

from __future__ import annotations

import logging
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with its control characters (C0 but newline and tab, DEL, C1, bidi overrides) escaped."""
    return _CONTROL.sub(_escape, text.replace("\r\n", "\n"))


_RAW_IN_JSON = re.compile(r"[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # json.dumps(ensure_ascii=False) leaves these raw


def json_safe(text: str) -> str:
    """JSON text with DEL and C1 controls written as ``\\u`` escapes (the same JSON value, exactly)."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class VisibleFormatter(logging.Formatter):
    """A log formatter whose lines (the message, the exception) are ``visible``."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))
