"""Shared helpers for the core-loop suite: result checks, wire readers and test hosts (the test's clients)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from agentls.agent.host import PermissionDecision, PermissionRequest
from agentls.agent.disk_host import DiskHost, UpdateCallback
from agentls.agent.result import ExitReason, TurnResult
from agentls.agent.sandbox.policy import SandboxConfig
from agentls.agent.scripted import RecordedRequest
from agentls.agent.transcript import violations

# For tests that read a command's pid from `echo $$`: the sandbox's PID namespace renumbers it.
UNSANDBOXED = SandboxConfig(mode="off")

BUILTIN_NAMES = ["read_file", "write_file", "edit_file", "list_dir", "search_files", "terminal", "diagnostics",
                 "fetch_url", "todo"]


def check(result: TurnResult) -> TurnResult:
    """The invariants every result must satisfy (docs/loop.md §1 the result, §3 the transcript)."""
    assert isinstance(result, TurnResult), type(result)
    assert violations(result.messages) == [], violations(result.messages)
    assert isinstance(result.exit_reason, ExitReason), result.exit_reason
    assert set(result.usage) >= {"prompt_tokens", "completion_tokens", "cached_tokens"}
    assert isinstance(result.api_calls, int) and isinstance(result.session_id, str)
    if result.failed:
        assert result.error is not None and set(result.error) >= {"category", "message"}, result.error
    assert result.completed == (result.exit_reason is ExitReason.TEXT_RESPONSE)
    return result


def tool_msgs(result: TurnResult) -> list[dict[str, Any]]:
    return [dict(m) for m in result.messages if m.get("role") == "tool"]


def roles(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    return [str(m.get("role")) for m in messages]


def text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b)
    return ""


def user_texts(req: RecordedRequest) -> list[str]:
    """Every text the user side carries in one request (text blocks only; tool results excluded)."""
    out: list[str] = []
    for m in req.messages:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return out


def wire_tool_results(req: RecordedRequest) -> list[str]:
    """The tool result texts of one request, in order, for either wire."""
    out: list[str] = []
    for m in req.messages:
        if req.wire == "openai" and m.get("role") == "tool":
            out.append(text(m.get("content")))
        elif req.wire == "anthropic" and isinstance(m.get("content"), list):
            out += [text(b.get("content")) for b in m["content"]
                    if isinstance(b, dict) and b.get("type") == "tool_result"]
    return out


def purpose(req: RecordedRequest) -> str:
    return req.headers.get("x-agentls-purpose", "turn")


def turn_requests(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    """Requests made for the conversation itself (not titles or summaries)."""
    return [r for r in requests if purpose(r) in ("turn", "grace")]


def all_request_bytes(requests: list[RecordedRequest]) -> bytes:
    return b"\n".join(r.raw for r in requests)


async def wait_until(cond: Callable[[], bool], timeout: float = 5.0, step: float = 0.005) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(step)


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class Updates:
    """Records every session update the agent sends (the host's ``on_update`` callback)."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def __call__(self, update: dict[str, Any]) -> None:
        self.items.append(update)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.items if u.get("sessionUpdate") == kind]

    def message_text(self) -> str:
        return "".join(u["content"]["text"] for u in self.of("agent_message_chunk"))

    def thought_text(self) -> str:
        return "".join(u["content"]["text"] for u in self.of("agent_thought_chunk"))


Delay = float | Callable[[Path], float]


class SlowHost(DiskHost):
    """A DiskHost whose disk is slow, and which logs every read and write (start/end, relative path)."""

    def __init__(self, root: Path, on_update: UpdateCallback | None = None, *, read_delay: Delay = 0.0,
                 write_delay: Delay = 0.0, read_error: Exception | None = None) -> None:
        super().__init__(root, on_update)
        self.read_delay, self.write_delay, self.read_error = read_delay, write_delay, read_error
        self.log: list[tuple[str, str, float]] = []
        self.active = 0
        self.max_active = 0

    def _delay(self, delay: Delay, path: Path) -> float:
        return delay(path) if callable(delay) else delay

    async def _slow(self, op: str, delay: Delay, path: Path, work: Callable[[], Awaitable[Any]]) -> Any:
        rel = path.relative_to(self.root).as_posix()
        self.log.append((op + "-start", rel, time.monotonic()))
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await asyncio.sleep(self._delay(delay, path))
            return await work()
        finally:
            self.active -= 1
            self.log.append((op + "-end", rel, time.monotonic()))

    async def read_text(self, path: Path) -> str:
        if self.read_error is not None:
            raise self.read_error
        result: str = await self._slow("read", self.read_delay, path, lambda: DiskHost.read_text(self, path))
        return result

    async def write_text(self, path: Path, content: str, *, previous: str | None) -> Any:
        return await self._slow("write", self.write_delay, path,
                                lambda: DiskHost.write_text(self, path, content, previous=previous))


class AnsweringHost(DiskHost):
    """A host whose user answers permission prompts with the given option kinds, in order (the last repeats)."""

    def __init__(self, root: Path, on_update: UpdateCallback | None = None,
                 answers: Iterable[str] = ("allow_once",)) -> None:
        super().__init__(root, on_update)
        self.answers = list(answers)
        self.asked: list[PermissionRequest] = []

    async def request_permission(self, request: PermissionRequest) -> PermissionDecision | None:
        self.asked.append(request)
        kind = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        option = next((o for o in request.options if o.kind == kind), None)
        assert option is not None, f"the agent offered no {kind!r} option: {request.options}"
        return PermissionDecision(option.option_id)


def load_json_arguments(call: dict[str, Any]) -> Any:
    return json.loads(call["function"]["arguments"])
