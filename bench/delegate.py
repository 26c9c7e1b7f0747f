"""Subagents (docs/loop.md §9.9): ``delegate_task`` with children side by side, against one child.

- **Side by side.** One turn whose model delegates 3 tasks; each child makes 5 ``read_file`` rounds and
  answers, every model answer after 50 ms. The delegate call is timed from its ``tool_call`` update to its
  final ``tool_call_update``; the baseline, in the same run, is the same turn with one child, the two
  alternating; the ratio is the median of the paired ratios. Ideal 1.0 (serial: 3.0); target ≤ 1.2.
- **Memory.** The peak RSS a turn adds over the process before it, in a fresh interpreter per sample (one
  warm-up turn with one child first), for 8 children at once against 1: (8-child delta - 1-child delta) / 7 per child.
  Target ≤ 1 MB.
- **The parent's loop.** ms per iteration of a 20-round ``read_file`` turn with ``delegate_task`` offered
  against the same turn without it (the built-in tools given as ``tools``), alternating; the ratio is the
  median of the paired ratios. Target: no change (≤ 1.05×).

The scripted provider runs in its own process (``deleg:K:N:MS`` in bench/provider.py).
``python -m bench.delegate [--quick]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, Row, bench_file_text, cli, fmt_ms, median, provider, rss_kb

ROUNDS, LATENCY_MS, CHILDREN, MANY = 5, 50, 3, 8
TARGET_RATIO, TARGET_MB, TARGET_LOOP = 1.2, 1.0, 1.05


async def delegate_call(url: str, ws: Path, children: int, *, concurrency: int = 3) -> float:
    """Seconds of the delegate call of one turn (``children`` tasks of ROUNDS rounds each)."""
    from agentls.agent.agent import AIAgent

    stamps: dict[str, float] = {}

    def on_update(update: dict[str, object]) -> None:
        if update.get("sessionUpdate") == "tool_call" and str(update.get("title")).startswith("Delegate"):
            stamps["start"] = time.perf_counter()
        if update.get("sessionUpdate") == "tool_call_update" and update.get("status") == "completed" and \
                isinstance(update.get("rawOutput"), dict):
            stamps["end"] = time.perf_counter()

    agent = AIAgent(model=f"deleg:{children}:{ROUNDS}:{LATENCY_MS}", base_url=url, api_key="bench", workspace=ws,
                    on_update=on_update, titles="prompt", approval="yolo", max_iterations=100,
                    delegate_concurrency=concurrency)
    async with agent:
        result = await agent.run_conversation("Ask the children.")
    tool = [m for m in result.messages if m.get("role") == "tool"]
    if not result.completed or len(tool) != 1 or tool[0].get("meta", {}).get("error"):
        raise RuntimeError(f"the delegation did not run as scripted: {result.exit_reason} {tool}")
    return stamps["end"] - stamps["start"]


async def loop_turn(url: str, ws: Path, offered: bool) -> float:
    """ms per iteration of a 20-round turn, with or without delegate_task offered."""
    from agentls.agent.agent import AIAgent
    from agentls.agent.tools.registry import BUILTIN_TOOLS

    agent = AIAgent(model="bench:20", base_url=url, api_key="bench", workspace=ws, titles="prompt",
                    approval="yolo", max_iterations=30, tools=None if offered else BUILTIN_TOOLS)
    if ("delegate_task" in agent.registry.names) != offered:
        raise RuntimeError("delegate_task is not offered as the case says")
    async with agent:
        t0 = time.perf_counter()
        result = await agent.run_conversation("Read bench.txt, then read it again, until you are told to stop.")
        took = time.perf_counter() - t0
    if not result.completed or result.api_calls != 21:
        raise RuntimeError(f"the loop turn did not run as scripted: {result.exit_reason}")
    return took / 21 * 1000


async def _rss_delta(url: str, ws: Path, children: int) -> float:
    """KiB the peak RSS rose during one turn with ``children`` at once (after a warm-up turn with one child, so
    imports and caches are in place but the extra children's memory is not)."""
    await delegate_call(url, ws, 1)
    before = rss_kb() or 0
    peak = before
    done = asyncio.Event()

    async def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_kb() or 0)
            await asyncio.sleep(0.002)

    sampler = asyncio.ensure_future(sample())
    await delegate_call(url, ws, children, concurrency=children)
    done.set()
    await sampler
    return float(peak - before)


def _fresh_delta(url: str, ws: Path, children: int) -> float:
    """``_rss_delta`` in a fresh interpreter (memory a process has grown to is rarely given back)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-m", "bench.delegate", "--rss", url, str(ws), str(children)],
                         check=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600).stdout
    return float(json.loads(out.strip().splitlines()[-1]))


async def measure(quick: bool) -> list[Row]:
    reps = 3 if quick else 7
    with provider() as prov, tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        ws = Path(tmp)
        (ws / "bench.txt").write_text(bench_file_text())
        url = prov.openai_url
        await delegate_call(url, ws, 1)  # warm-up
        three: list[float] = []
        one: list[float] = []
        for _ in range(reps):
            three.append(await delegate_call(url, ws, CHILDREN))
            one.append(await delegate_call(url, ws, 1))
        with_tool: list[float] = []
        without: list[float] = []
        await loop_turn(url, ws, True)
        for i in range(reps):
            for offered in ((True, False) if i % 2 == 0 else (False, True)):
                (with_tool if offered else without).append(await loop_turn(url, ws, offered))
        many = [_fresh_delta(url, ws, MANY) for _ in range(2 if quick else 3)]
        single = [_fresh_delta(url, ws, 1) for _ in range(2 if quick else 3)]
    t3, t1 = median(three), median(one)
    paired = median([a / b for a, b in zip(three, one, strict=True)])  # a load swing hits both halves of a pair
    per_child = max(0.0, (median(many) - median(single)) / (MANY - 1)) / 1024
    lw, lo = median(with_tool), median(without)
    loop_ratio = median([a / b for a, b in zip(with_tool, without, strict=True)])
    return [
        Row(f"delegate_task: {CHILDREN} children × {ROUNDS} tool rounds, {LATENCY_MS} ms model latency (call wall)",
            fmt_ms(t3 * 1000), f"{fmt_ms(t1 * 1000)} (one child; serial would be {CHILDREN}×)", f"{paired:.2f}×",
            f"≤ {TARGET_RATIO}× one child", ok=paired <= TARGET_RATIO),
        Row(f"  RSS per child ({MANY} at once against 1, peak over the turn, fresh process)",
            f"{per_child:.2f} MB", f"{median(single) / 1024:.2f} MB (a turn with one child)", "",
            f"≤ {TARGET_MB:g} MB", ok=per_child <= TARGET_MB),
        Row("  parent loop overhead, 20 read_file rounds, delegate_task offered (ms/iteration)", fmt_ms(lw, 2),
            f"{fmt_ms(lo, 2)} (not offered)", f"{loop_ratio:.2f}×", f"≤ {TARGET_LOOP}×", ok=loop_ratio <= TARGET_LOOP),
    ]


def run(quick: bool = False) -> list[Row]:
    return asyncio.run(measure(quick))


def _rss_mode(args: argparse.Namespace) -> bool:
    if not args.rss:
        return False
    url, ws, children = args.rss
    print(json.dumps(asyncio.run(_rss_delta(url, Path(ws), int(children)))))
    return True


def main(argv: list[str] | None = None) -> int:
    def extra(p: argparse.ArgumentParser) -> None:
        p.add_argument("--rss", nargs=3, metavar=("URL", "WS", "K"), help=argparse.SUPPRESS)

    return cli("delegate", run, argv, extra=extra, alternative=_rss_mode)


if __name__ == "__main__":
    sys.exit(main())
