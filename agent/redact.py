"""Secret redaction for logs and trajectories.

``redact`` removes the secret values it is given and anything shaped like an API key or a bearer
token. It is a safety net: the loop's first duty is never to put keys into messages at all.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"
MIN_SECRET_CHARS = 4  # shorter "secrets" would redact ordinary words

# Whole tokens that are secrets by their shape alone.
_TOKEN_PATTERNS = (
    r"sk-ant-[A-Za-z0-9_\-]{8,}",
    r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}",
    r"gh[pousr]_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"AKIA[0-9A-Z]{16}",
    r"AIza[0-9A-Za-z_\-]{30,}",
    r"hf_[A-Za-z0-9]{30,}",
    r"glpat-[A-Za-z0-9_\-]{20,}",
)
_TOKENS = re.compile(r"(?<![A-Za-z0-9_\-])(?:" + "|".join(_TOKEN_PATTERNS) + r")")

# ``Authorization: ...``, ``x-api-key: ...``: the rest of the header line goes.
_HEADERS = re.compile(
    r"(?im)\b((?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key|x-auth-token)(\"?\s*:\s*\"?)"
    r"(?!\s*\[REDACTED\])([^\r\n\"]+)"
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+(?!\[REDACTED\])[A-Za-z0-9\-._~+/]{8,}=*")

# ``"api_key": "..."``, ``api_key=...``, ``OPENAI_API_KEY=...``, ``password: ...``.
_KEY_NAMES = (r"[A-Za-z0-9_\-]*(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|password|passwd|"
              r"access[_\-]?token|auth[_\-]?token|refresh[_\-]?token|session[_\-]?token|private[_\-]?key)"
              r"|(?<![A-Za-z0-9_\-])token")
_ASSIGNMENTS = re.compile(
    r"(?i)((?<![A-Za-z0-9])[\"']?(?:" + _KEY_NAMES + r")[\"']?\s*[:=]\s*)"
    r"(\"(?:[^\"\\]|\\.)*\"|'[^']*'|(?!\[REDACTED\])[^\s,;&}\]\)\"']+)"
)
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+@")


def _assignment(match: re.Match[str]) -> str:
    prefix, value = match.group(1), match.group(2)
    if value[:1] in ("'", '"'):
        inner = value[1:-1]
        if not inner or inner == REDACTED or inner.lower() in ("null", "none"):
            return match.group(0)
        return f"{prefix}{value[0]}{REDACTED}{value[0]}"
    if value.lower() in ("null", "none", "true", "false"):
        return match.group(0)
    return prefix + REDACTED


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with the given secret values and key-shaped strings replaced by ``[REDACTED]``."""
    if not text:
        return text
    for secret in sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _HEADERS.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _TOKENS.sub(REDACTED, text)
    text = _ASSIGNMENTS.sub(_assignment, text)
    return _URL_CREDENTIALS.sub(f"{REDACTED}@", text)


def redact_value(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of a JSON-like value with every string in it redacted."""
    found = tuple(secrets)
    if isinstance(value, str):
        return redact(value, found)
    if isinstance(value, dict):
        return {k: redact_value(v, found) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, found) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """Redacts log records (message, arguments, exception text). Attach it to handlers: a filter
    on a logger does not see records that propagate up from child loggers."""

    def __init__(self, secrets: Iterable[str] = (), name: str = "") -> None:
        super().__init__(name)
        self.secrets = tuple(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            message = str(record.msg)
        record.msg = redact(message, self.secrets)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.secrets)
        return True


# Environment variables whose values are secrets (names like OPENAI_API_KEY, GITHUB_TOKEN, DB_PASSWORD).
_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.I)


def secrets_from_env(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of secret-named environment variables, to redact wherever they turn up."""
    env = os.environ if environ is None else environ
    return tuple(v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= MIN_SECRET_CHARS)


def protect_handler(handler: logging.Handler) -> logging.Handler:
    """``handler`` with a ``RedactingFilter`` for key-shaped strings and the environment's secrets."""
    handler.addFilter(RedactingFilter(secrets_from_env()))
    return handler
