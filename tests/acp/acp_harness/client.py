"""The test's ACP client (an ``acp.Client``): a disk-backed editor with terminals and a scripted user.

- ``fs/*`` read from ``buffers`` (unsaved editor text) first, then the disk; writes go to the disk.
- ``terminal/*`` run real processes and keep their output (tail-capped at ``outputByteLimit``).
- ``session/request_permission`` answers from ``answers`` (option ids); ``"wait"`` holds the request until
  ``release_waiting()`` (a compliant client answering ``cancelled`` after ``session/cancel``), and
  ``"ignore"`` never answers at all.
"""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    CreateTerminalResponse,
    DeniedOutcome,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)


@dataclass
class Term:
    process: asyncio.subprocess.Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None
    released: bool = False


class TestClient:
    __test__ = False

    def __init__(self) -> None:
        self.updates: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.buffers: dict[str, str] = {}
        self.answers: deque[str] = deque()
        self.permission_requests: list[dict[str, Any]] = []
        self.terminals: dict[str, Term] = {}
        self.fail: set[str] = set()  # methods that answer with an error (an editor that cannot)
        self.empty_for_missing = False  # answer a missing file with "" and no error (as Toad does)
        self._changed = asyncio.Event()
        self._release = asyncio.Event()
        self._ids = 0

    # ----- helpers for tests -----------------------------------------------------------------
    def reset(self) -> None:
        """Forget what earlier tests saw (the module shares one client)."""
        self.calls.clear()
        self.answers.clear()
        self.permission_requests.clear()
        self.buffers.clear()
        self.fail.clear()
        self.empty_for_missing = False

    def kinds(self, session_id: str) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates[session_id]]

    def text(self, session_id: str) -> str:
        return "".join(u["content"].get("text", "") for u in self.updates[session_id]
                       if u["sessionUpdate"] == "agent_message_chunk")

    def methods(self) -> list[str]:
        return [m for m, _ in self.calls]

    async def wait_for(self, predicate: Any, timeout: float = 10.0) -> None:
        """Until ``predicate()`` holds: woken by client events, and polled for anything else."""
        async with asyncio.timeout(timeout):
            while not predicate():
                self._changed.clear()
                try:
                    await asyncio.wait_for(self._changed.wait(), 0.02)
                except TimeoutError:
                    pass

    def release_waiting(self) -> None:
        self._release.set()

    def _log(self, method: str, params: dict[str, Any]) -> None:
        self.calls.append((method, params))
        self._changed.set()
        if method in self.fail:
            raise RequestError.internal_error({"details": f"this editor cannot {method} right now"})

    # ----- acp.Client ------------------------------------------------------------------------
    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates[session_id].append(update.model_dump(mode="json", by_alias=True, exclude_none=True))
        self._changed.set()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> RequestPermissionResponse:
        request = {"sessionId": session_id, "toolCall": tool_call.model_dump(by_alias=True, exclude_none=True),
                   "options": [o.model_dump(by_alias=True) for o in options]}
        self.permission_requests.append(request)
        self._log("session/request_permission", request)
        answer = self.answers.popleft() if self.answers else "allow_once"
        if answer == "ignore":
            await asyncio.Event().wait()
        if answer == "wait":
            self._release.clear()
            await self._release.wait()
            answer = "cancelled"
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self._log("fs/read_text_file", {"path": path, "line": line, "limit": limit})
        try:
            content = self.buffers[path] if path in self.buffers else Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            if self.empty_for_missing:
                return ReadTextFileResponse(content="")
            raise RequestError.resource_not_found(path) from None
        if line is not None or limit is not None:  # as editors do: from a 1-based line, at most `limit` lines
            lines = content.splitlines(keepends=True)
            start = max(1, line or 1) - 1
            content = "".join(lines[start: start + limit if limit is not None else None])
        return ReadTextFileResponse(content=content)

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> WriteTextFileResponse | None:
        self._log("fs/write_text_file", {"path": path, "content": content})
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(content, encoding="utf-8")
        self.buffers.pop(path, None)
        return WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: list[Any] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **kwargs: Any) -> CreateTerminalResponse:
        self._log("terminal/create", {"command": command, "args": args, "cwd": cwd, "limit": output_byte_limit})
        extra = {e.name: e.value for e in env or []}
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env={**os.environ, **extra}, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        self._ids += 1
        tid = f"term-{self._ids}"
        term = Term(process, output_byte_limit)
        term.reader = asyncio.ensure_future(self._read(term))
        self.terminals[tid] = term
        return CreateTerminalResponse(terminal_id=tid)

    async def _read(self, term: Term) -> None:
        assert term.process.stdout is not None
        while chunk := await term.process.stdout.read(4096):
            term.output.extend(chunk)
            if term.limit is not None and len(term.output) > term.limit:
                del term.output[: len(term.output) - term.limit]
                term.truncated = True

    def _status(self, term: Term) -> TerminalExitStatus | None:
        code = term.process.returncode
        if code is None:
            return None
        return TerminalExitStatus(exit_code=code if code >= 0 else None, signal=None if code >= 0 else str(-code))

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        self._log("terminal/output", {"terminalId": terminal_id})
        term = self.terminals[terminal_id]
        return TerminalOutputResponse(output=term.output.decode("utf-8", "replace"), truncated=term.truncated,
                                      exit_status=self._status(term))

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> WaitForTerminalExitResponse:
        self._log("terminal/wait_for_exit", {"terminalId": terminal_id})
        term = self.terminals[terminal_id]
        await term.process.wait()
        if term.reader is not None:
            await term.reader
        status = self._status(term)
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse | None:
        self._log("terminal/kill", {"terminalId": terminal_id})
        term = self.terminals[terminal_id]
        if term.process.returncode is None:
            os.killpg(term.process.pid, 9)
            await term.process.wait()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str,
                               **kwargs: Any) -> ReleaseTerminalResponse | None:
        self._log("terminal/release", {"terminalId": terminal_id})
        term = self.terminals[terminal_id]
        if term.process.returncode is None:
            os.killpg(term.process.pid, 9)
            await term.process.wait()
        term.released = True
        return ReleaseTerminalResponse()
