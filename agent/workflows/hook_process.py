"""One hook program: ``sh -c`` in its own session and process group, JSON on stdin, stdout and stderr kept
apart and bounded, a time limit. It runs as the user, outside the command sandbox. When it exits, times
out or the turn is cancelled, it and everything it started (a daemon too) are killed (agent/process_group.py).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream, Process

from ..process import CLEANUP_SECONDS, OutputBuffer, reap
from ..process_group import CommandGroup

OUTPUT_LIMIT = 64 * 1024  # per stream, head and tail
LEFTOVER_GRACE = 0.2


@dataclass(frozen=True)
class HookRun:
    exit_code: int | None  # None: it timed out, was killed, or never started
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str | None = None  # it could not be started


async def _drain(stream: ByteReceiveStream | None, buffer: OutputBuffer) -> None:
    if stream is None:
        return
    try:
        async for chunk in stream:
            buffer.feed(chunk)
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        return


async def _feed(process: Process, payload: bytes) -> None:
    stdin = process.stdin
    if stdin is None:
        return
    try:
        await stdin.send(payload)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass  # a hook that does not read its input
    finally:
        try:
            await stdin.aclose()
        except (anyio.BrokenResourceError, OSError):
            pass


async def run_hook(command: str, payload: bytes, cwd: Path, timeout: float, env: dict[str, str]) -> HookRun:
    group = CommandGroup()
    out, err = OutputBuffer(OUTPUT_LIMIT), OutputBuffer(OUTPUT_LIMIT)
    try:
        with anyio.CancelScope(shield=True):  # a spawn is quick; cancelled halfway it would leave a process
            try:
                process = await anyio.open_process(
                    ["/bin/sh", "-c", command], cwd=cwd, env={**os.environ, **env, **group.env},
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
            except OSError as exc:
                return HookRun(None, "", "", error=f"could not be started: {exc.strerror or exc}")
        group.leader = process.pid
        timed_out = False
        try:
            with anyio.move_on_after(timeout) as scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_feed, process, payload)
                    done = anyio.Event()

                    async def drain_both() -> None:
                        async with anyio.create_task_group() as inner:
                            inner.start_soon(_drain, process.stdout, out)
                            inner.start_soon(_drain, process.stderr, err)
                        done.set()

                    tg.start_soon(drain_both)
                    await process.wait()
                    group.leader_reaped = True
                    await anyio.to_thread.run_sync(group.kill)  # whatever it left running (a daemon holding stdout)
                    with anyio.move_on_after(LEFTOVER_GRACE):
                        await done.wait()
                    tg.cancel_scope.cancel()
            timed_out = scope.cancelled_caught
        except BaseException:
            group.kill()
            raise
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_SECONDS):
                await reap(group, process)
                await process.aclose()
        code = process.returncode
        return HookRun(None if timed_out or code is None or code < 0 else code, out.text(), err.text(),
                       timed_out=timed_out)
    finally:
        group.close()
