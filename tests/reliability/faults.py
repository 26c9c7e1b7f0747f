"""The provider fault matrix: one list of cases, used by ``test_fault_matrix.py`` and by the table in
``docs/reliability.md`` (``python tests/reliability/faults.py`` prints it; a test keeps the doc in sync).

Every case is one scripted provider fault, the category docs/loop.md §4 says it is, and the recovery
the loop must make:

- ``retry``: the call is retried after a jittered backoff (or ``Retry-After``) and the turn completes;
- ``exhausted``: retries until ``max_retries`` runs out, then a structured failure;
- ``compress``: the context is compressed and the call retried once;
- ``fallback``: the next ``fallback_models`` entry answers;
- ``fail``: a structured failure at once (``failed=True``, ``error.category``), no retry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentls.agent.scripted import (
    Reply,
    call,
    cut_stream,
    error,
    invalid_json,
    malformed_sse,
    reset,
    stall,
    tools,
)

RECOVERIES = {
    "retry": "retried once after the backoff window (or `Retry-After`), then completed",
    "exhausted": "retried `max_retries` times with growing backoff, then a structured failure",
    "compress": "context compressed, call retried, then completed",
    "fallback": "next fallback model answered",
    "fail": "structured failure at once (not retried)",
}
OVERFLOW_400 = ("This model's maximum context length is 32000 tokens. However, your messages resulted in "
                "40000 tokens. Please reduce the length of the messages.")
CUT_FILE = "cut-never-written.txt"


@dataclass(frozen=True)
class Fault:
    id: str
    what: str
    make: Callable[[], Reply]
    category: str
    recovery: str
    stream_only: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    stalls_for: float = 0.0  # the client waits this long before the failure shows (a read timeout)

    @property
    def retry_after(self) -> float | None:
        return self.make().retry_after


CASES: list[Fault] = [
    Fault("400-context", "400 with a context-length message",
          lambda: error(400, OVERFLOW_400, error_code="context_length_exceeded"), "context_overflow", "compress"),
    Fault("401", "401 invalid key", lambda: error(401, "Incorrect API key provided"), "auth", "fallback"),
    Fault("401-alone", "401 with no fallback configured", lambda: error(401, "Incorrect API key provided"),
          "auth", "fail"),
    Fault("402", "402 payment required", lambda: error(402, "You exceeded your current quota"), "billing",
          "fallback"),
    Fault("403", "403 forbidden", lambda: error(403, "Your key may not use this model"), "auth", "fallback"),
    Fault("404", "404 model not found", lambda: error(404, "The model `m` does not exist"), "model_not_found",
          "fallback"),
    Fault("404-alone", "404 model not found, no fallback", lambda: error(404, "The model `m` does not exist"),
          "model_not_found", "fail"),
    Fault("413", "413 payload too large", lambda: error(413, "Request Entity Too Large"), "payload_too_large",
          "compress"),
    Fault("429-retry-after", "429 with `Retry-After: 0.3`",
          lambda: error(429, "Rate limit reached", retry_after=0.3), "rate_limit", "retry"),
    Fault("429", "429 without `Retry-After`", lambda: error(429, "Rate limit reached"), "rate_limit", "retry"),
    Fault("429-exhausted", "429 on every attempt", lambda: error(429, "Rate limit reached"), "rate_limit",
          "exhausted", options={"max_retries": 2}),
    Fault("500", "500 internal error", lambda: error(500, "Internal server error"), "server_error", "retry"),
    Fault("503", "503 service unavailable", lambda: error(503, "Service Unavailable"), "server_error", "retry"),
    Fault("504", "504 gateway timeout", lambda: error(504, "Gateway Timeout"), "timeout", "retry"),
    Fault("529", "529 overloaded", lambda: error(529, "Overloaded"), "overloaded", "retry"),
    Fault("reset-before", "connection reset before the response", lambda: reset("before"), "server_error",
          "retry"),
    Fault("reset-during", "connection reset during the response (mid-stream)",
          lambda: reset("during", content="half an answer that the reset cuts off"), "server_error", "retry"),
    Fault("stall", "stall longer than the read timeout (0.4 s)", lambda: stall(5.0), "timeout", "retry",
          options={"request_timeout": 0.4}, stalls_for=0.4),
    Fault("malformed-sse", "malformed SSE", malformed_sse, "format_error", "retry"),
    Fault("invalid-json", "invalid JSON body / stream events", invalid_json, "format_error", "retry"),
    Fault("cut-tool-call", "stream cut mid tool-call (the call must never run)",
          lambda: cut_stream(4, tools(call("write_file", {"path": CUT_FILE, "content": "x" * 300}))),
          "server_error", "retry", stream_only=True),
    Fault("content-policy", "400 flagged by the content policy",
          lambda: error(400, "Your request was flagged by our content policy"), "content_policy", "fail"),
    Fault("400-bad-request", "400 malformed request (our bug: not retried)",
          lambda: error(400, "messages.0.content: unexpected field 'foo'"), "format_error", "fail"),
    Fault("418-unknown", "418, a status nobody documents", lambda: error(418, "I'm a teapot"), "unknown",
          "retry"),
]

WIRES = ("openai", "anthropic")
STREAMS = (True, False)


def variants() -> list[tuple[Fault, str, bool]]:
    """Every (case, wire, stream) the matrix runs."""
    return [(f, w, s) for f in CASES for w in WIRES for s in STREAMS if s or not f.stream_only]


def markdown_table() -> str:
    lines = ["| case | fault | category | recovery asserted | runs |", "|---|---|---|---|---|"]
    for f in CASES:
        runs = sum(1 for v in variants() if v[0] is f)
        lines.append(f"| `{f.id}` | {f.what} | `{f.category}` | {RECOVERIES[f.recovery]} | {runs} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())
    print(f"\n{len(CASES)} faults, {len(variants())} runs; categories covered: "
          f"{len({f.category for f in CASES})}/12")
