"""Child processes for commands: ``sh -c`` in its own session and process group, output bounded, and
everything the command started (background jobs, ``setsid`` daemons, double forks) killed when it
returns, times out or is cancelled (``agentls.agent.process_group``).

A command cannot leave a process running: when its shell exits, whatever it put in the background is
killed with the rest, and a background job that still holds the output does not hold the call. Servers
that must keep running belong in the editor's terminal. A command reads nothing: its stdin is
/dev/null.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import subprocess

import anyio
from anyio.abc import Process

from .host import CommandResult, CommandSpec
from .process_group import CommandGroup
from .sandbox.wrap import confine

CLEANUP_SECONDS = 5.0  # the most a kill and its reaping may take, even under cancellation
HOLDER_GRACE = 0.2  # the output is still open this long after the kill: look for whoever holds it
_cleanups: set[asyncio.Task[None]] = set()


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


def command_argv(spec: CommandSpec) -> list[str]:
    """The argv to spawn for ``spec``: the one place a sandbox wraps the command."""
    argv = ["/bin/sh", "-c", spec.command]
    return confine(argv, spec.sandbox, spec.cwd) if spec.sandbox is not None else argv


def command_env(spec: CommandSpec, group: CommandGroup) -> dict[str, str]:
    env = {**os.environ, **(spec.env or {}), "PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"}
    for name in spec.unset_env:
        env.pop(name, None)
    env.update(group.env)  # last: a marker inherited from an outer agentls is replaced
    if spec.sandbox is not None:
        env["AGENTLS_SANDBOXED"] = spec.sandbox.mechanism
    return env


async def reap(group: CommandGroup, process: Process) -> None:
    """The end of a command's or a hook's process: whatever it left running killed (unless the group is
    already clean), the leader waited for. Callers shield it and bound it with ``CLEANUP_SECONDS``."""
    if not group.clean:
        await anyio.to_thread.run_sync(group.kill)
    await process.wait()
    group.leader_reaped = True

async def run_process(spec: CommandSpec) -> CommandResult:
    """Run ``spec.command``; when it ends, times out or is cancelled, nothing it started is left."""
    group = CommandGroup()
    try:
        return await _run(spec, group)
    finally:
        group.close()


async def _run(spec: CommandSpec, group: CommandGroup) -> CommandResult:
    buffer = OutputBuffer(spec.output_limit)
    read_fd, write_fd = os.pipe()  # stdout and stderr together; ours, so we know who holds it
    os.set_blocking(read_fd, False)
    group.pipe = f"pipe:[{os.fstat(read_fd).st_ino}]"
    spawn = asyncio.ensure_future(anyio.open_process(
        command_argv(spec), cwd=spec.cwd, env=command_env(spec, group), stdin=subprocess.DEVNULL,
        stdout=write_fd, stderr=write_fd, start_new_session=True))
    try:
        process: Process = await asyncio.shield(spawn)
    except BaseException:
        # Cancelled (or failed) while spawning. No await can be trusted here: a cancel scope cancels each
        # one again. Whatever has already exec'd carries the marker and is killed now; the spawn runs on,
        # and the moment it is done a callback kills all it brought.
        group.kill()
        spawn.add_done_callback(functools.partial(_abandoned, group, (read_fd, write_fd)))
        raise
    os.close(write_fd)
    group.leader = process.pid
    timed_out = False
    try:
        with anyio.move_on_after(spec.timeout) as scope:
            eof = anyio.Event()
            async with anyio.create_task_group() as tg:
                tg.start_soon(_read, read_fd, buffer, eof)
                await process.wait()
                group.leader_reaped = True
                await _leftovers(group, eof)
                tg.cancel_scope.cancel()
        timed_out = scope.cancelled_caught
    except BaseException:
        group.kill()  # at once, before anything else is awaited
        raise
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_SECONDS):
            await reap(group, process)
            await _settle(group)
        _drain(read_fd, buffer)
        os.close(read_fd)
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_SECONDS):
            await process.aclose()
    code = process.returncode
    sig = None
    if code is not None and code < 0:
        sig = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        code = None
    return CommandResult(exit_code=None if timed_out else code, output=buffer.text(),
                         truncated=buffer.dropped > 0, timed_out=timed_out, signal=sig,
                         sandbox=spec.sandbox.mechanism if spec.sandbox is not None else None)


async def _read(fd: int, buffer: OutputBuffer, eof: anyio.Event) -> None:
    while True:
        await anyio.wait_readable(fd)
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            continue
        if not data:
            eof.set()
            return
        buffer.feed(data)


async def _leftovers(group: CommandGroup, eof: anyio.Event) -> None:
    """The shell has exited: kill what it left behind, then read the rest of the output. A process that
    left the group but still holds the output is found by the pipe it holds."""
    await anyio.to_thread.run_sync(group.kill)
    with anyio.move_on_after(HOLDER_GRACE):
        await eof.wait()
    if not eof.is_set():
        await anyio.to_thread.run_sync(functools.partial(group.kill, holders=True))
        with anyio.move_on_after(CLEANUP_SECONDS):
            await eof.wait()


async def _settle(group: CommandGroup) -> None:
    """Reap the killed processes re-parented to us as they die (a few milliseconds)."""
    delay = 0.002
    while not group.reap():
        await anyio.sleep(delay)
        delay = min(delay * 2, 0.1)


def _drain(fd: int, buffer: OutputBuffer) -> None:
    """What the killed processes had written and nobody read yet."""
    with contextlib.suppress(OSError):
        while data := os.read(fd, 65536):
            buffer.feed(data)


def _abandoned(group: CommandGroup, fds: tuple[int, int], spawn: asyncio.Future[Process]) -> None:
    """The spawn of a cancelled call is done: kill what it started, close the pipe, reap in the background."""
    process = None if spawn.cancelled() or spawn.exception() is not None else spawn.result()
    if process is not None:
        group.leader = process.pid
    group.kill()
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    if process is not None:
        task = asyncio.ensure_future(_reap(group, process))
        _cleanups.add(task)
        task.add_done_callback(_cleanups.discard)


async def _reap(group: CommandGroup, process: Process) -> None:
    with anyio.move_on_after(CLEANUP_SECONDS):
        await process.wait()
        group.leader_reaped = True
        group.kill()
        await _settle(group)
    await process.aclose()
