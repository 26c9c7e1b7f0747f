"""The scripted provider's data model: replies, their builders and recorded requests."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

Wire = Literal["openai", "anthropic", "responses"]
ResetWhen = Literal["before", "during"]


@dataclass
class ToolCallSpec:
    """One tool call of a reply. A ``str`` ``arguments`` is sent verbatim (broken JSON included)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass
class Reply:
    """What the fake model answers to one request. Every field combines with every other."""

    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, int] | None = None
    # timing
    latency: float = 0.0
    chunk_delay: float = 0.0
    chunk_size: int | None = None
    # faults
    status: int = 200
    error_message: str | None = None
    error_type: str | None = None
    error_code: str | None = None
    retry_after: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    reset: ResetWhen | None = None
    stall: float = 0.0
    malformed_sse: bool = False
    invalid_json: bool = False
    cut_after_chunks: int | None = None
    empty: bool = False
    # a recorded response body sent verbatim (``recorded.replay``): SSE frames, or a JSON body
    recorded: str | None = None
    recorded_sse: bool = True

    @property
    def finish(self) -> str:
        """The OpenAI-vocabulary finish reason (the default depends on the tool calls)."""
        if self.finish_reason is not None:
            return TO_OPENAI_FINISH.get(self.finish_reason, self.finish_reason)
        return "tool_calls" if self.tool_calls and not self.empty else "stop"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reply:
        """Build a reply from JSON-like field values (``--script`` files, ``/_scripted/push``)."""
        if not isinstance(data, Mapping):
            raise TypeError(f"a reply must be an object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown reply field(s) {unknown}; known: {sorted(known)}")
        values = dict(data)
        raw_calls = values.pop("tool_calls", None) or []
        if not isinstance(raw_calls, list):
            raise TypeError("'tool_calls' must be a list")
        calls: list[ToolCallSpec] = []
        for raw in raw_calls:
            if isinstance(raw, ToolCallSpec):
                calls.append(raw)
            elif isinstance(raw, Mapping) and isinstance(raw.get("name"), str):
                args = raw.get("arguments", {})
                if not isinstance(args, dict | str):
                    raise TypeError("tool call 'arguments' must be an object or a string")
                calls.append(ToolCallSpec(raw["name"], args, raw.get("id")))
            else:
                raise TypeError(f"a tool call needs a string 'name': {raw!r}")
        if values.get("reset") not in (None, "before", "during"):
            raise ValueError("'reset' must be 'before' or 'during'")
        return cls(tool_calls=calls, **values)


# ---------------------------------------------------------------- finish reasons
TO_ANTHROPIC_FINISH = {"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens",
                       "content_filter": "refusal"}
TO_OPENAI_FINISH = {v: k for k, v in TO_ANTHROPIC_FINISH.items()}


# ---------------------------------------------------------------- builders
def text(content: str, reasoning: str | None = None, **kw: Any) -> Reply:
    """A final text answer, optionally with reasoning."""
    return Reply(content=content, reasoning=reasoning, **kw)


def call(name: str, arguments: dict[str, Any] | str | None = None, id: str | None = None) -> ToolCallSpec:
    """One tool call for :func:`tools` / :func:`truncated`."""
    return ToolCallSpec(name, {} if arguments is None else arguments, id)


def tools(*calls: ToolCallSpec, content: str | None = None, **kw: Any) -> Reply:
    """An assistant turn that calls tools (optionally with some text before the calls)."""
    return Reply(content=content, tool_calls=list(calls), **kw)


def error(status: int, message: str | None = None, *, retry_after: float | None = None,
          type: str | None = None, **kw: Any) -> Reply:
    """An HTTP error in the vendor's error shape (``type`` defaults by status)."""
    return Reply(status=status, error_message=message, retry_after=retry_after, error_type=type, **kw)


def reset(when: ResetWhen = "before", **kw: Any) -> Reply:
    """Abort the TCP connection (RST) before any response byte, or mid-response."""
    kw.setdefault("content", "this answer is cut off by a connection reset")
    return Reply(reset=when, **kw)


def stall(seconds: float, **kw: Any) -> Reply:
    """Send the headers (and the first SSE frame), then sleep ``seconds`` before the rest."""
    kw.setdefault("content", "ok")
    return Reply(stall=seconds, **kw)


def malformed_sse(**kw: Any) -> Reply:
    """Valid headers, then ``data: {broken`` frames."""
    return Reply(malformed_sse=True, **kw)


def invalid_json(**kw: Any) -> Reply:
    """HTTP 200 with a body that is not JSON (garbage data frames when streaming)."""
    return Reply(invalid_json=True, **kw)


def cut_stream(after_chunks: int, reply: Reply) -> Reply:
    """A copy of ``reply`` whose stream ends cleanly after ``after_chunks`` SSE frames."""
    return replace(reply, cut_after_chunks=after_chunks)


def empty(**kw: Any) -> Reply:
    """HTTP 200 with no content and no tool calls."""
    return Reply(empty=True, **kw)


def truncated(*calls: ToolCallSpec, **kw: Any) -> Reply:
    """Tool calls whose argument JSON stops in the middle, with ``finish_reason="length"``."""
    if not calls:
        calls = (call("write_file", {"path": "notes.txt", "content": "a long text " * 8}),)
    cut: list[ToolCallSpec] = []
    for c in calls:
        full = c.arguments_json()
        cut.append(ToolCallSpec(c.name, full[: max(1, len(full) // 2)], c.id))
    kw.setdefault("finish_reason", "length")
    return Reply(tool_calls=cut, **kw)


# ---------------------------------------------------------------- usage
def resolve_usage(reply: Reply, prompt_chars: int) -> dict[str, int]:
    """Token counts in OpenAI semantics (``prompt_tokens`` includes cached tokens).

    The override accepts either vocabulary: ``prompt_tokens``/``completion_tokens``/``cached_tokens``
    or ``input_tokens``/``output_tokens``/``cache_read_input_tokens``/``cache_creation_input_tokens``
    (Anthropic semantics: ``input_tokens`` excludes cache reads and writes).
    """
    produced = len(reply.content or "") + len(reply.reasoning or "")
    produced += sum(len(c.name) + len(c.arguments_json()) for c in reply.tool_calls)
    u = reply.usage or {}
    cached = u.get("cached_tokens", u.get("cache_read_input_tokens", 0))
    creation = u.get("cache_creation_input_tokens", 0)
    if "prompt_tokens" in u:
        prompt = u["prompt_tokens"]
    elif "input_tokens" in u:
        prompt = u["input_tokens"] + cached + creation
    else:
        prompt = prompt_chars // 4
    completion = u.get("completion_tokens", u.get("output_tokens", 0 if reply.empty else produced // 4))
    reasoning = u.get("reasoning_tokens", len(reply.reasoning or "") // 4)
    return {"prompt": prompt, "completion": completion, "cached": cached, "creation": creation,
            "reasoning": reasoning}


# ---------------------------------------------------------------- recorded requests
@dataclass
class RecordedRequest:
    """One request as the server received it (stored even when rejected)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    wire: Wire
    model: str
    stream: bool
    received_at: float
    raw: bytes = b""
    rejected: str | None = None  # the 400 message when strict validation refused it
    client_disconnected: bool = False  # the client went away before the response was complete

    @property
    def messages(self) -> list[dict[str, Any]]:
        msgs = self.body.get("input" if self.wire == "responses" else "messages")
        return [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []

    @property
    def system(self) -> str | None:
        if self.wire == "responses" and isinstance(self.body.get("instructions"), str):
            return str(self.body["instructions"])
        if self.wire == "anthropic":
            sys = self.body.get("system")
            return sys if isinstance(sys, str) or sys is None else text_of(sys)
        parts = [text_of(m.get("content")) for m in self.messages if m.get("role") in ("system", "developer")]
        return "\n".join(parts) if parts else None

    @property
    def tools(self) -> list[str]:
        out: list[str] = []
        for t in self.body.get("tools") or []:
            if isinstance(t, dict):
                fn = t.get("function") if self.wire == "openai" else t
                if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                    out.append(fn["name"])
        return out

    @property
    def last_user_text(self) -> str | None:
        """The text of the most recent user message that has text (tool results skipped)."""
        for m in reversed(self.messages):
            if m.get("role") != "user":
                continue
            content = m.get("content")
            if isinstance(content, list):
                content = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
                if not content:
                    continue
            return text_of(content)
        return None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "headers": self.headers, "body": self.body, "wire": self.wire,
                "model": self.model, "stream": self.stream, "received_at": self.received_at,
                "rejected": self.rejected, "client_disconnected": self.client_disconnected}


def text_of(content: Any) -> str:
    """The text of a message content: a string, or the text parts/blocks of a list, joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content
                         if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


# ---------------------------------------------------------------- wire formats
@dataclass
class RenderContext:
    """What a wire renderer needs besides the reply."""

    model: str
    prompt_chars: int
    include_usage: bool
    new_id: Callable[[str], str]  # prefix -> unique id ("call_" -> "call_7")


@dataclass(frozen=True)
class WireFormat:
    name: Wire
    json_body: Callable[[Reply, RenderContext], dict[str, Any]]
    sse_frames: Callable[[Reply, RenderContext], list[bytes]]
    error_body: Callable[[int, str, str | None, str | None], dict[str, Any]]
    garbage_frames: Callable[[bool], list[bytes]]  # malformed=True: "data: {broken"; False: non-JSON data


def split_text(s: str, size: int | None) -> list[str]:
    """Text deltas: ``size`` chars each, or one per word (whitespace kept with the word before it)."""
    if not s:
        return []
    if size is not None and size > 0:
        return [s[i:i + size] for i in range(0, len(s), size)]
    out: list[str] = []
    start = 0
    n = len(s)
    i = 0
    while i < n:
        while i < n and s[i].isspace():
            i += 1
        while i < n and not s[i].isspace():
            i += 1
        while i < n and s[i] == " ":
            i += 1
        out.append(s[start:i])
        start = i
    return out


def split_args(s: str) -> list[str]:
    """Argument JSON in 2-3 fragments (fewer when it is very short)."""
    n = len(s)
    if n < 2:
        return [s] if s else []
    if n < 6:
        return [s[: n // 2], s[n // 2:]]
    a, b = n // 3, 2 * n // 3
    return [s[:a], s[a:b], s[b:]]


Responder = Callable[[RecordedRequest], Reply | Awaitable[Reply]]
"""``fn(request) -> Reply`` (or an awaitable of one), used when the queues are empty."""
