"""Cancelling a turn stops a hung hook of any event at once and kills its process group, as for PreToolUse
(docs/workflows.md, "Bounds"): a hook never holds a turn."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from agentls.agent.result import ExitReason
from agentls.agent.scripted import ScriptedServer, text

from .conftest import Make, alive, hook_program, write


@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit", "Stop"])
async def test_an_interrupt_stops_a_hung_hook(make: Make, srv: ScriptedServer, home: Path, event: str) -> None:
    pidfile = home / "hook.pid"
    hang = hook_program(home, "hang", f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(300)\n")
    write(home / "config.toml", f"[[hooks.{event}]]\ncommand = {hang!r}\ntimeout = 600\n")
    agent = make()
    srv.push(text("the answer"), text("second answer"))
    result = None

    async def turn() -> None:
        nonlocal result
        result = await agent.run_conversation("go")

    async with anyio.create_task_group() as tg:
        tg.start_soon(turn)
        with anyio.fail_after(20):
            while not pidfile.exists() or not pidfile.read_text():
                await anyio.sleep(0.02)
        started = time.monotonic()
        assert agent.interrupt()
        with anyio.fail_after(10):
            while result is None:
                await anyio.sleep(0.02)
    assert time.monotonic() - started < 5
    assert result is not None and result.exit_reason is ExitReason.INTERRUPTED
    pid = int(pidfile.read_text())
    with anyio.fail_after(10):
        while alive(pid):
            await anyio.sleep(0.02)
    if event != "Stop":
        assert srv.requests == []  # the prompt never reached the model
