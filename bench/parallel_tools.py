"""3. Parallel tools: one round of 8 independent ``read_file`` calls, each behind a host that takes 100 ms.

The tool phase is timed from the first ``tool_call`` update (the model's answer has been parsed) to the
last ``tool_call_update`` that completes a call. Ideal: 100 ms (all eight at once); serial: 800 ms.
The baseline, measured in the same run, is ``asyncio.gather`` of the same eight host reads with no agent
around them (the floor of this host on this machine).

``python -m bench.parallel_tools [--quick]``
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from bench.common import Row, bench_file_text, cli, fmt_ms, fmt_ratio, median, provider

CALLS = 8
HOST_DELAY = 0.100
TARGET_MS = 130.0


def slow_host(root: Path, on_update: object) -> object:
    from agentls.agent.disk_host import DiskHost

    class SlowHost(DiskHost):
        """The disk, but every read takes 100 ms more (an editor round trip, a network filesystem)."""

        async def read_text(self, path: Path) -> str:
            await asyncio.sleep(HOST_DELAY)
            return await super().read_text(path)

    return SlowHost(root, on_update)  # type: ignore[arg-type]


async def agentls_round(url: str, ws: Path) -> float:
    """Seconds of the tool phase of one turn."""
    from agentls.agent.agent import AIAgent

    stamps: list[tuple[float, str, str]] = []

    def on_update(update: dict[str, object]) -> None:
        stamps.append((time.perf_counter(), str(update.get("sessionUpdate")), str(update.get("status", ""))))

    host = slow_host(ws, on_update)
    agent = AIAgent(model=f"par:{CALLS}", base_url=url, api_key="bench", workspace=ws, host=host,  # type: ignore[arg-type]
                    titles="prompt", approval="yolo")
    async with agent:
        result = await agent.run_conversation("Read the eight files f0.txt ... f7.txt.")
    tools = [m for m in result.messages if m.get("role") == "tool"]
    if not result.completed or len(tools) != CALLS or any(m.get("meta", {}).get("error") for m in tools):
        raise RuntimeError(f"the parallel round did not run as scripted: {result.exit_reason}")
    start = min(t for t, kind, _ in stamps if kind == "tool_call")
    end = max(t for t, kind, status in stamps if kind == "tool_call_update" and status == "completed")
    return end - start


async def floor(ws: Path) -> float:
    host = slow_host(ws, None)
    t0 = time.perf_counter()
    await asyncio.gather(*(host.read_text(ws / f"f{i}.txt") for i in range(CALLS)))  # type: ignore[attr-defined]
    return time.perf_counter() - t0


async def measure(quick: bool) -> tuple[float, float]:
    reps = 3 if quick else 9
    ours: list[float] = []
    base: list[float] = []
    with provider() as prov, tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        ws = Path(tmp)
        for i in range(CALLS):
            (ws / f"f{i}.txt").write_text(bench_file_text())
        await agentls_round(prov.openai_url, ws)  # warm-up
        for _ in range(reps):
            ours.append(await agentls_round(prov.openai_url, ws))
            base.append(await floor(ws))
    return median(ours), median(base)


def run(quick: bool = False) -> list[Row]:
    ours, base = asyncio.run(measure(quick))
    return [Row(f"parallel tools: {CALLS} read_file calls × 100 ms host (tool phase wall)", fmt_ms(ours * 1000),
                f"{fmt_ms(base * 1000)} (gather floor; ideal 100, serial 800)", fmt_ratio(ours, base),
                f"≤ {TARGET_MS:.0f} ms", ok=ours * 1000 <= TARGET_MS)]


def main(argv: list[str] | None = None) -> int:
    return cli("parallel_tools", run, argv)


if __name__ == "__main__":
    sys.exit(main())
