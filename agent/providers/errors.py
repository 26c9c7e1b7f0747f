"""Provider failures, classified into the categories of docs/loop.md §4, each with recovery hints."""

from __future__ import annotations

import re
from dataclasses import dataclass

CATEGORIES = (
    "auth", "billing", "rate_limit", "overloaded", "server_error", "timeout", "context_overflow",
    "payload_too_large", "model_not_found", "format_error", "content_policy", "unknown",
)


@dataclass(frozen=True)
class Hints:
    retryable: bool
    compress: bool
    fallback: bool


HINTS: dict[str, Hints] = {
    "auth": Hints(retryable=False, compress=False, fallback=True),
    "billing": Hints(retryable=False, compress=False, fallback=True),
    "rate_limit": Hints(retryable=True, compress=False, fallback=True),
    "overloaded": Hints(retryable=True, compress=False, fallback=True),
    "server_error": Hints(retryable=True, compress=False, fallback=True),
    "timeout": Hints(retryable=True, compress=False, fallback=True),
    "context_overflow": Hints(retryable=True, compress=True, fallback=False),
    "payload_too_large": Hints(retryable=True, compress=True, fallback=False),
    "model_not_found": Hints(retryable=False, compress=False, fallback=True),
    "format_error": Hints(retryable=True, compress=False, fallback=False),
    "content_policy": Hints(retryable=False, compress=False, fallback=False),
    "unknown": Hints(retryable=True, compress=False, fallback=False),
}


class ProviderError(Exception):
    def __init__(self, category: str, message: str, *, status: int | None = None,
                 retry_after: float | None = None, model: str | None = None) -> None:
        super().__init__(message)
        self.category = category if category in HINTS else "unknown"
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.model = model

    @property
    def hints(self) -> Hints:
        return HINTS[self.category]

    def __str__(self) -> str:
        where = f" (HTTP {self.status})" if self.status else ""
        return f"{self.category}{where}: {self.message}"


_OVERFLOW = re.compile(
    r"context.length|context.window|maximum context|too many tokens|prompt is too long|"
    r"reduce the length|exceeds? the (?:model'?s? |available )?(?:maximum|context)|input is too long|"
    r"n_ctx|context_length_exceeded|exceed_context_size|token limit", re.IGNORECASE)  # llama.cpp: "available context"
_BILLING = re.compile(r"billing|insufficient.quota|quota exceeded|payment|credit balance|credits", re.IGNORECASE)
_MODEL = re.compile(r"model.{0,40}(not.found|does not exist|unknown|not available|no such)|"
                    r"(unknown|invalid|unsupported) model|model_not_found", re.IGNORECASE)
_POLICY = re.compile(r"content.policy|content_filter|safety|flagged|moderation", re.IGNORECASE)
_RATE = re.compile(r"rate.limit|too many requests|rate_limit", re.IGNORECASE)
_OVERLOAD = re.compile(r"overloaded|capacity|temporarily unavailable", re.IGNORECASE)


def classify_status(status: int, message: str) -> str:
    """The category for an HTTP error status and its message."""
    if _OVERFLOW.search(message) and status in (400, 413, 422, 500):
        return "context_overflow"
    if status == 401:
        return "auth"
    if status == 402 or _BILLING.search(message) and status in (400, 403, 429):
        return "billing"
    if status == 403:
        return "content_policy" if _POLICY.search(message) else "auth"
    if status == 404:
        return "model_not_found"
    if status == 413:
        return "payload_too_large"
    if status == 429:
        return "overloaded" if _OVERLOAD.search(message) and not _RATE.search(message) else "rate_limit"
    if status == 529 or status == 503 and _OVERLOAD.search(message):
        return "overloaded"
    if status in (408, 504):
        return "timeout"
    if status >= 500:
        return "server_error"
    if status in (400, 422):
        if _MODEL.search(message):
            return "model_not_found"
        if _POLICY.search(message):
            return "content_policy"
        return "format_error"
    return "unknown"


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import datetime as _dt
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    return max(0.0, (when - _dt.datetime.now(_dt.UTC)).total_seconds())
