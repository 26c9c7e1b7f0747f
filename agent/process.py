"""Child processes for commands: ``sh -c`` in its own process group, output bounded, the group killed on
timeout or cancellation."""

from __future__ import annotations

import asyncio
import os
import signal

import anyio
from anyio.abc import Process

from agentls.agent.host import CommandResult, CommandSpec
from agentls.agent.sandbox.wrap import confine


class OutputBuffer:
    """Keeps the head and the tail of a stream within ``limit`` bytes, counting what was dropped."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head.extend(data[:room])
            data = data[room:]
        if data:
            self.tail.extend(data)
            excess = len(self.tail) - self.tail_limit
            if excess > 0:
                del self.tail[:excess]
                self.dropped += excess

    def text(self) -> str:
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if self.dropped:
            return f"{head}\n[... {self.dropped} bytes of output omitted ...]\n{tail}"
        return head + tail


async def run_process(spec: CommandSpec) -> CommandResult:
    """Run ``spec.command`` with ``sh -c`` in its own process group, inside ``spec.sandbox`` when given;
    kill the group on timeout or cancel."""
    buffer = OutputBuffer(spec.output_limit)
    env = {**os.environ, **(spec.env or {}), "PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"}
    for name in spec.unset_env:
        env.pop(name, None)
    argv = ["/bin/sh", "-c", spec.command]
    if spec.sandbox is not None:
        argv = confine(argv, spec.sandbox, spec.cwd)
        env["AGENTLS_SANDBOXED"] = spec.sandbox.mechanism
    # The spawn runs to its end even if we are cancelled meanwhile: otherwise only /bin/sh would be killed
    # and the command it already forked would live on. Once we hold the process, its whole group is killed.
    spawn = asyncio.ensure_future(anyio.open_process(
        argv, cwd=spec.cwd, env=env, stdin=None,
        stdout=-1, stderr=-2, start_new_session=True))  # stdout PIPE, stderr into stdout
    try:
        process: Process = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        await asyncio.wait([spawn])
        if not spawn.cancelled() and spawn.exception() is None:
            started = spawn.result()
            _kill_group(started)
            await asyncio.wait([asyncio.ensure_future(started.wait())], timeout=5)
            await started.aclose()
        raise
    timed_out = False
    try:
        with anyio.move_on_after(spec.timeout) as scope:
            assert process.stdout is not None
            async for chunk in process.stdout:
                buffer.feed(chunk)
            await process.wait()
        if scope.cancelled_caught:
            timed_out = True
            _kill_group(process)
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await process.wait()
    except BaseException:
        _kill_group(process)
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await process.wait()
        raise
    finally:
        await process.aclose()
    code = process.returncode
    sig = None
    if code is not None and code < 0:
        sig = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        code = None
    return CommandResult(exit_code=None if timed_out else code, output=buffer.text(),
                         truncated=buffer.dropped > 0, timed_out=timed_out, signal=sig,
                         sandbox=spec.sandbox.mechanism if spec.sandbox is not None else None)


def _kill_group(process: Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            process.kill()
        except ProcessLookupError:
            pass
