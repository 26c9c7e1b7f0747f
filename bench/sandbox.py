"""Sandbox cost: the time a sandboxed command adds over the same command unsandboxed.

Each command (``true``, ``python -c pass``) runs through ``agentls.agent.process.run_process`` (the path
the terminal tool takes) unsandboxed and under each mechanism that works here, interleaved so load hits
all alike. The figure is the median of the paired differences (sandboxed − unsandboxed) beside the
median unsandboxed time, measured in the same run. Target: at most 20 ms added per command. The CPU
rows (user + system time of the command and everything it started, from ``RUSAGE_CHILDREN``) move far
less with the machine's load than wall time; the last row is the floor of the Landlock launcher, a bare
``python -I -S -c pass``.

``python -m bench.sandbox [--quick]``
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Row, cli, fmt_ms, median

TARGET_MS = 20.0
COMMANDS = (("true", "true"), ("python -c pass", f"{sys.executable} -c pass"))


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def _once(command: str, ws: Path, confinement: Any) -> tuple[float, float]:
    """(wall, CPU) seconds of one command through run_process."""
    from agentls.agent.host import CommandSpec
    from agentls.agent.process import run_process

    spec = CommandSpec(command=command, cwd=ws, timeout=60, output_limit=10_000, tool_call_id="bench",
                       sandbox=confinement)
    cpu0, t0 = _children_cpu(), time.perf_counter()
    result = await run_process(spec)
    took, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if result.exit_code != 0:
        raise RuntimeError(f"{command!r} failed under {confinement}: {result.output}")
    return took, cpu


async def _mechanisms(ws: Path) -> dict[str, Any]:
    """Each mechanism: its confinement of ``ws``, or why it does not work here (a string)."""
    from agentls.agent.sandbox import detect as detect_module
    from agentls.agent.sandbox.policy import BUBBLEWRAP, LANDLOCK, Confinement

    found: dict[str, Any] = {}
    for name in (BUBBLEWRAP, LANDLOCK):
        os.environ[detect_module.ONLY_ENV] = name
        got = await detect_module.detect()
        tmp = Path(tempfile.mkdtemp(prefix="agentls-bench-tmp-")) if name == BUBBLEWRAP else None
        found[name] = Confinement(name, ws, (), False, got.program, tmp) if got.mechanism == name else got.detail
    os.environ.pop(detect_module.ONLY_ENV, None)
    return found


async def measure(quick: bool) -> list[Row]:
    reps = 15 if quick else 80
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        ws = Path(tmp).resolve()
        mechanisms = await _mechanisms(ws)
        working = {name: conf for name, conf in mechanisms.items() if not isinstance(conf, str)}
        for label, command in COMMANDS:
            plain: list[float] = []
            added: dict[str, list[float]] = {name: [] for name in working}
            cpu_added: dict[str, list[float]] = {name: [] for name in working}
            for conf in working.values():  # warm-up (detection, page cache, bytecode)
                await _once(command, ws, conf)
            for _ in range(reps):
                base, base_cpu = await _once(command, ws, None)
                plain.append(base)
                for name, conf in working.items():
                    wall, cpu = await _once(command, ws, conf)
                    added[name].append(wall - base)
                    cpu_added[name].append(cpu - base_cpu)
            unsandboxed = fmt_ms(median(plain) * 1000) + " (unsandboxed)"
            for name, conf in mechanisms.items():
                metric = f"sandbox: `{label}` under {name}, added per command"
                if isinstance(conf, str):
                    rows.append(Row(metric, f"n/a ({conf[:80]})", unsandboxed, target=f"≤ {TARGET_MS:.0f} ms"))
                    continue
                extra = median(added[name]) * 1000
                ratio = f"{(median(plain) * 1000 + extra) / (median(plain) * 1000):.2f}×"
                rows.append(Row(metric, fmt_ms(extra), unsandboxed, ratio, f"≤ {TARGET_MS:.0f} ms",
                                ok=extra <= TARGET_MS))
                rows.append(Row("  CPU added (command and its children)", fmt_ms(median(cpu_added[name]) * 1000)))
        floor = [(await _once(f"{sys.executable} -I -S -c pass", ws, None))[0] for _ in range(reps)]
        rows.append(Row("  Landlock launcher's floor: `python -I -S -c pass`", fmt_ms(median(floor) * 1000)))
        for conf in working.values():
            if conf.tmp is not None:
                shutil.rmtree(conf.tmp, ignore_errors=True)
    return rows


def run(quick: bool = False) -> list[Row]:
    return asyncio.run(measure(quick))


def main(argv: list[str] | None = None) -> int:
    return cli("sandbox", run, argv)


if __name__ == "__main__":
    sys.exit(main())
