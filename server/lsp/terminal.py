"""The ``terminal`` tool's commands: in the editor (``agent/terminal/*``) when the client declared
``experimental.agent.terminal`` (unsandboxed: the editor runs them), else in-server, in the OS sandbox,
with a timeout and an output cap. With ``sandbox = "strict"`` they always run in-server.

The editor requests have the shapes of ACP's ``terminal/*`` in camelCase, plus ``sessionId``.
``command`` is a shell command line (run it with a shell). On timeout, interrupt or cancellation the
server sends ``kill`` and then ``release``; every request has a timeout of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

from agentls.agent.host import CommandResult, CommandSpec
from agentls.agent.process import run_process

if TYPE_CHECKING:
    from .server import AgentServer

log = logging.getLogger("agentls.lsp.terminal")

CLEANUP_TIMEOUT = 5.0


class TerminalError(Exception):
    pass


def _signal(status: Any) -> str | None:
    sig = status.get("signal") if isinstance(status, dict) else None
    return sig if isinstance(sig, str) and sig else None


def _exit_code(status: Any) -> int | None:
    code = status.get("exitCode") if isinstance(status, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


class Terminals:
    def __init__(self, ls: AgentServer, session_id: str,
                 on_created: Callable[[str, str], Awaitable[None]] | None = None) -> None:
        self._ls = ls
        self.session_id = session_id
        self._on_created = on_created  # (tool_call_id, terminal_id): lets the client show the live terminal
        self._live: set[str] = set()
        self._client_lacks_terminals = False

    async def run(self, spec: CommandSpec) -> CommandResult:
        # The editor's terminal is the editor's: nothing confines it. Sandbox "strict" keeps commands in-server.
        if self._ls.features.terminal and not self._client_lacks_terminals and not spec.in_server:
            try:
                return await self._run_in_editor(spec)
            except JsonRpcMethodNotFound:
                log.warning("the client declared terminals but has no agent/terminal/create; running in-server")
                self._client_lacks_terminals = True
            except TerminalError as exc:
                return CommandResult(exit_code=None, output=f"[the editor's terminal failed: {exc}]")
        return await run_process(spec)

    async def _request(self, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
        try:
            return await self._ls.call(method, {"sessionId": self.session_id, **params}, timeout)
        except TimeoutError:
            raise TerminalError(f"{method} got no answer in {timeout or self._ls.options.client_timeout:g} s") \
                from None
        except JsonRpcMethodNotFound:
            raise
        except JsonRpcException as exc:
            raise TerminalError(f"{method} failed: {exc.message}") from None

    async def _run_in_editor(self, spec: CommandSpec) -> CommandResult:
        # ACP terminal shape: the program and its arguments. A shell line runs as `sh -c <line>`.
        created = await self._request("agent/terminal/create", {
            "command": "sh", "args": ["-c", spec.command], "cwd": str(spec.cwd),
            "env": [{"name": k, "value": v} for k, v in (spec.env or {}).items()],
            "outputByteLimit": spec.output_limit})
        terminal_id = created.get("terminalId") if isinstance(created, dict) else None
        if not isinstance(terminal_id, str) or not terminal_id:
            raise TerminalError(f"agent/terminal/create answered without a terminalId: {created!r}")
        self._live.add(terminal_id)
        ids = {"terminalId": terminal_id}
        if self._on_created is not None:
            await self._on_created(spec.tool_call_id, terminal_id)
        timed_out = False
        try:
            status: Any = None
            with anyio.move_on_after(spec.timeout) as scope:
                status = await self._request("agent/terminal/waitForExit", ids, spec.timeout + CLEANUP_TIMEOUT)
            if scope.cancelled_caught:
                timed_out = True
                await self._request("agent/terminal/kill", ids)
            out = await self._request("agent/terminal/output", ids)
        except BaseException:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_TIMEOUT):
                await self._quietly("agent/terminal/kill", ids)
                await self._release(terminal_id)
            raise
        await self._release(terminal_id)
        output = out.get("output") if isinstance(out, dict) else None
        if status is None and isinstance(out, dict):
            status = out.get("exitStatus")
        return CommandResult(exit_code=None if timed_out else _exit_code(status),
                             output=output if isinstance(output, str) else "",
                             truncated=bool(isinstance(out, dict) and out.get("truncated")),
                             timed_out=timed_out, signal=_signal(status), terminal_id=terminal_id)

    async def _quietly(self, method: str, ids: dict[str, Any]) -> None:
        try:
            await self._request(method, ids, CLEANUP_TIMEOUT)
        except (TerminalError, JsonRpcException) as exc:
            log.info("%s: %s", method, exc)

    async def _release(self, terminal_id: str) -> None:
        if terminal_id in self._live:
            self._live.discard(terminal_id)
            await self._quietly("agent/terminal/release", {"terminalId": terminal_id})

    async def release_all(self) -> None:
        for terminal_id in list(self._live):
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_TIMEOUT):
                await self._release(terminal_id)
