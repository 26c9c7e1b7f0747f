"""The local model's child process (agent/local/runtime.py): reading its one announcement line, and ending it."""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

STOP_GRACE = 3.0


async def read_line(proc: anyio.abc.Process, timeout: float, expected_seconds: float,
                    report: Callable[[float], None]) -> tuple[bytes | None, str]:
    """The child's announcement line, or None and why not; ``report`` moves the progress bar meanwhile."""
    assert proc.stdout is not None
    reader = BufferedByteReceiveStream(proc.stdout)
    started = time.monotonic()
    line: bytes | None = None
    failure = ""

    async def tick() -> None:
        while True:
            await anyio.sleep(0.2)
            report(0.95 * min(1.0, (time.monotonic() - started) / expected_seconds))

    async with anyio.create_task_group() as tg:
        tg.start_soon(tick)
        try:
            with anyio.fail_after(timeout):
                line = await reader.receive_until(b"\n", 1 << 16)
        except TimeoutError:
            failure = f"the local model server did not start within {timeout:.0f}s"
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            with anyio.move_on_after(2.0):
                await proc.wait()
            failure = (f"the local model server exited during start-up (exit status "
                       f"{proc.returncode}); out of memory, or not a valid GGUF?")
        tg.cancel_scope.cancel()
    return line, failure


async def reap(proc: anyio.abc.Process) -> None:
    """Lifeline EOF first (the child exits at once), then SIGTERM, then SIGKILL; always wait."""
    if proc.stdin is not None:
        try:
            await proc.stdin.aclose()
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
    for step in ("eof", "terminate", "kill"):
        if proc.returncode is not None:
            break
        try:
            if step == "terminate":
                proc.terminate()
            elif step == "kill":
                proc.kill()
        except ProcessLookupError:
            pass
        with anyio.move_on_after(STOP_GRACE if step != "kill" else 10.0):
            await proc.wait()
    await proc.aclose()
