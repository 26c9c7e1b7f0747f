"""Sandbox cost: the time a sandboxed command adds over the same command unsandboxed.

Each command (``true``, ``python -c pass``) runs through ``agentls.agent.process.run_process`` (the path
the terminal tool takes) unsandboxed and under each mechanism that works here, interleaved so load hits
all alike. The figure is the median of the paired differences (sandboxed − unsandboxed) beside the
median unsandboxed time, measured in the same run. Target: at most 20 ms added per command.

``python -m bench.sandbox [--quick]``
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from bench.common import Row, cli, fmt_ms, median

TARGET_MS = 20.0
COMMANDS = (("true", "true"), ("python -c pass", f"{sys.executable} -c pass"))


async def _once(command: str, ws: Path, confinement: object) -> float:
    from agentls.agent.host import CommandSpec
    from agentls.agent.process import run_process

    spec = CommandSpec(command=command, cwd=ws, timeout=60, output_limit=10_000, tool_call_id="bench",
                       sandbox=confinement)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    result = await run_process(spec)
    took = time.perf_counter() - t0
    if result.exit_code != 0:
        raise RuntimeError(f"{command!r} failed under {confinement}: {result.output}")
    return took


async def _mechanisms(ws: Path) -> dict[str, object]:
    import os

    from agentls.agent.sandbox import detect as detect_module
    from agentls.agent.sandbox.policy import BUBBLEWRAP, LANDLOCK, Confinement

    found: dict[str, object] = {}
    for name in (BUBBLEWRAP, LANDLOCK):
        os.environ[detect_module.ONLY_ENV] = name
        got = await detect_module.detect()
        if got.mechanism == name:
            found[name] = Confinement(name, ws, (), False, got.program)
        else:
            found[name] = got.detail
    os.environ.pop(detect_module.ONLY_ENV, None)
    return found


async def measure(quick: bool) -> list[Row]:
    reps = 15 if quick else 80
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        ws = Path(tmp).resolve()
        mechanisms = await _mechanisms(ws)
        for label, command in COMMANDS:
            plain: list[float] = []
            added: dict[str, list[float]] = {m: [] for m, c in mechanisms.items() if not isinstance(c, str)}
            for conf in mechanisms.values():  # warm-up
                if not isinstance(conf, str):
                    await _once(command, ws, conf)
            for _ in range(reps):
                base = await _once(command, ws, None)
                plain.append(base)
                for name in added:
                    added[name].append(await _once(command, ws, mechanisms[name]) - base)
            unsandboxed = fmt_ms(median(plain) * 1000) + " (unsandboxed)"
            for name, conf in mechanisms.items():
                metric = f"sandbox: `{label}` under {name}, added per command"
                if isinstance(conf, str):
                    rows.append(Row(metric, f"n/a ({conf[:80]})", unsandboxed, target=f"≤ {TARGET_MS:.0f} ms"))
                    continue
                extra = median(added[name]) * 1000
                rows.append(Row(metric, fmt_ms(extra), unsandboxed, f"{(median(plain) * 1000 + extra) / (median(plain) * 1000):.2f}×",
                                f"≤ {TARGET_MS:.0f} ms", ok=extra <= TARGET_MS))
    return rows


def run(quick: bool = False) -> list[Row]:
    return asyncio.run(measure(quick))


def main(argv: list[str] | None = None) -> int:
    return cli("sandbox", run, argv)


if __name__ == "__main__":
    sys.exit(main())
