"""``AcpHost``: the core's ``Host`` over ACP client methods.

Reads and writes go through ``fs/read_text_file`` / ``fs/write_text_file`` when the client declared them
(the editor's unsaved buffers are what the agent sees and edits), else the disk. Commands run in the
editor's terminal (``terminal/*``, unsandboxed) when it declared ``terminal`` and the sandbox is not
``strict``, else in-process, in the OS sandbox. Permissions always go through ``session/request_permission``
(a baseline client method), with the runtime's tool-call shape (its ``locations`` name the file and the
line an edit changes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import Any

import anyio
from acp import RequestError
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    EnvVariable,
    PermissionOption,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
)

from agentls.agent import events
from agentls.agent.host import (
    CommandResult,
    CommandSpec,
    PermissionDecision,
    PermissionRequest,
    WriteResult,
)
from agentls.agent.disk_host import DiskHost
from agentls.agent.fileio import TextWindow
from agentls.agent.turn_control import TurnControl
from agentls.agent.types import SessionUpdate
from .capabilities import ClientCaps
from .updates import UpdateSink
from ..runtime.permission_call import permission_tool_call

log = logging.getLogger("agentls.acp")

CLEANUP_TIMEOUT = 5.0
COMMAND_ENV = {"PAGER": "cat", "GIT_PAGER": "cat"}


class AcpHost:
    def __init__(self, conn: Client, session_id: str, root: Path, caps: ClientCaps, sink: UpdateSink,
                 control: TurnControl) -> None:
        self._conn = conn
        self._sid = session_id
        self._local = DiskHost(root)
        self._caps = caps
        self._sink = sink
        self._control = control
        self._terminals: set[str] = set()

    @property
    def root(self) -> Path:
        return self._local.root

    # ----- files -----------------------------------------------------------------------------
    async def read_text(self, path: Path) -> str:
        if not self._caps.read_text_file:
            return await self._local.read_text(path)
        try:
            response = await self._conn.read_text_file(session_id=self._sid, path=str(path))
        except RequestError as exc:
            if not path.exists():  # editors answer a missing file with an error of their own choosing
                raise FileNotFoundError(str(path)) from None
            log.warning("fs/read_text_file %s failed (%s); reading the disk", path, exc)
            return await self._local.read_text(path)
        _missing_if_empty(response.content, path)
        return response.content

    async def read_window(self, path: Path, offset: int, limit: int, max_line_chars: int) -> TextWindow:
        """The editor's lines when it reads files (it gets ``line``/``limit``), else the disk, streamed."""
        if not self._caps.read_text_file:
            return await self._local.read_window(path, offset, limit, max_line_chars)
        try:
            response = await self._conn.read_text_file(session_id=self._sid, path=str(path), line=offset,
                                                       limit=limit + 1)
        except RequestError as exc:
            if not path.exists():
                raise FileNotFoundError(str(path)) from None
            log.warning("fs/read_text_file %s failed (%s); reading the disk", path, exc)
            return await self._local.read_window(path, offset, limit, max_line_chars)
        _missing_if_empty(response.content, path)
        window = TextWindow.of_text(response.content, 1, limit, max_line_chars)
        window.offset = offset
        window.cut = {n + offset - 1: full for n, full in window.cut.items()}
        window.total = None  # only the window was asked for
        return window

    async def write_text(self, path: Path, content: str, *, previous: str | None) -> WriteResult:
        if not self._caps.write_text_file:
            return await self._local.write_text(path, content, previous=previous)
        try:
            await self._conn.write_text_file(session_id=self._sid, path=str(path), content=content)
        except RequestError as exc:
            return WriteResult(False, f"the editor refused the write: {exc}")
        return WriteResult(True)

    async def delete_file(self, path: Path) -> WriteResult:
        return await self._local.delete_file(path)  # ACP has no delete; undo of a created file lands here

    # ----- commands --------------------------------------------------------------------------
    async def run_command(self, spec: CommandSpec) -> CommandResult:
        # The editor's terminal is the editor's: nothing confines it. Sandbox "strict" keeps commands in-process.
        if not self._caps.terminal or spec.in_server:
            return await self._local.run_command(spec)
        env = [EnvVariable(name=k, value=v) for k, v in {**COMMAND_ENV, **(spec.env or {})}.items()]
        try:
            created = await self._conn.create_terminal(session_id=self._sid, command="/bin/sh",
                                                       args=["-c", spec.command], cwd=str(spec.cwd), env=env,
                                                       output_byte_limit=spec.output_limit)
        except RequestError as exc:
            log.warning("terminal/create failed (%s); running the command in-process", exc)
            return await self._local.run_command(spec)
        tid = created.terminal_id
        self._terminals.add(tid)
        try:
            return await self._follow(spec, tid)
        finally:
            with anyio_shield():
                await self._release(tid)

    async def _follow(self, spec: CommandSpec, tid: str) -> CommandResult:
        await self._sink.send(events.tool_call_update(spec.tool_call_id, content=[events.terminal_content(tid)]))
        timed_out = False
        exited: WaitForTerminalExitResponse | None = None
        try:
            async with asyncio.timeout(spec.timeout):
                exited = await self._conn.wait_for_terminal_exit(session_id=self._sid, terminal_id=tid)
        except TimeoutError:
            timed_out = True
            await self._kill(tid)
        except RequestError as exc:
            log.warning("terminal/wait_for_exit %s failed: %s", tid, exc)
            await self._kill(tid)
        except BaseException:  # interrupted: stop the command before the tool reports
            with anyio_shield():
                await self._kill(tid)
            raise
        try:
            out = await self._conn.terminal_output(session_id=self._sid, terminal_id=tid)
            text, truncated, status = out.output, out.truncated, out.exit_status
        except RequestError as exc:
            text, truncated, status = f"(the editor did not return the output: {exc})", False, None
        code = exited.exit_code if exited is not None else status.exit_code if status is not None else None
        sig = exited.signal if exited is not None else status.signal if status is not None else None
        return CommandResult(exit_code=None if timed_out else code, output=text, truncated=truncated,
                             timed_out=timed_out, signal=sig, terminal_id=tid)

    async def _kill(self, tid: str) -> None:
        try:
            async with asyncio.timeout(CLEANUP_TIMEOUT):
                await self._conn.kill_terminal(session_id=self._sid, terminal_id=tid)
        except (RequestError, TimeoutError, ConnectionError) as exc:
            log.warning("terminal/kill %s failed: %s", tid, exc)

    async def _release(self, tid: str) -> None:
        self._terminals.discard(tid)
        try:
            async with asyncio.timeout(CLEANUP_TIMEOUT):
                await self._conn.release_terminal(session_id=self._sid, terminal_id=tid)
        except (RequestError, TimeoutError, ConnectionError) as exc:
            log.warning("terminal/release %s failed: %s", tid, exc)

    async def release(self, task_id: str | None = None) -> None:
        """Terminals are released as each command ends; this catches any left over (close, crash)."""
        for tid in list(self._terminals):
            await self._release(tid)

    # ----- permissions and updates -----------------------------------------------------------
    async def request_permission(self, request: PermissionRequest) -> PermissionDecision | None:
        cancelled = self._control.when_stopped()
        if cancelled.done():
            return PermissionDecision("cancelled")
        call = ToolCallUpdate.model_validate(permission_tool_call(request, self.root))
        options = [PermissionOption(option_id=o.option_id, name=o.name, kind=o.kind) for o in request.options]
        ask = asyncio.ensure_future(self._conn.request_permission(session_id=self._sid, tool_call=call,
                                                                  options=options))
        try:
            waiting: list[asyncio.Future[Any]] = [ask, cancelled]
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if cancelled.done() or not ask.done():
                return PermissionDecision("cancelled")
            answer = ask.result()
        except RequestError as exc:
            log.warning("session/request_permission failed (%s); the approval mode decides", exc)
            return None
        finally:
            cancelled.cancel()
            if not ask.done():
                ask.cancel()
                with contextlib.suppress(BaseException):
                    await ask
        outcome = answer.outcome
        if isinstance(outcome, AllowedOutcome):
            return PermissionDecision(outcome.option_id)
        return PermissionDecision("cancelled")

    async def send_update(self, update: SessionUpdate) -> None:
        await self._sink.send(update)
        notice = events.sandbox_notice(update)
        if notice is not None:  # clients that ignore _meta still show the user a short quoted note
            await self._sink.text(f"\n> {notice}\n\n")


def _missing_if_empty(content: str, path: Path) -> None:
    """Some editors (Toad) answer ``fs/read_text_file`` for a file that does not exist with ``""`` rather
    than an error. ACP reports no open buffers, so an empty answer for a name with nothing on disk (not
    even a dangling symlink) is a missing file: created, not overwritten, and removed again by ``/undo``."""
    if not content and not os.path.lexists(path):
        raise FileNotFoundError(str(path))


def anyio_shield() -> anyio.CancelScope:
    """Cleanup that must finish even while the turn is being cancelled (the core uses anyio scopes)."""
    return anyio.CancelScope(shield=True)
