"""4. Concurrency: one ``agentls lsp`` process, 50 sessions, each a 20-round turn with 50 ms of model latency.

All 50 ``agent/turn`` requests are sent at once over one stdio connection; the wall time runs from the
first request to the last answer. Ideal: 21 provider calls × 50 ms ≈ 1.05 s. The baseline, in the same
run, is 50 copies of the raw httpx loop (``bench/loop_overhead.py``) running concurrently in this
process against the same provider and model.

Memory (the server's /proc status): the peak RSS (VmHWM) over the whole run, and the RSS per idle
session, measured two ways: 50 fresh sessions (created, never run), and the same 50 after their turn
(idle again, transcript in memory), each as (RSS after − RSS before) / 50 after one warm-up turn.

``python -m bench.concurrency [--quick]`` (quick: 10 sessions)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.common import (
    Row,
    bench_file_text,
    cli,
    cpu_seconds,
    fmt_ratio,
    median,
    peak_rss_kb,
    provider,
    rss_kb,
)
from bench.loop_overhead import Case, RawStore, raw_turn, wire_setup
from bench.lspface import bench_options, gather_turns, lsp_server, new_session, turn
from bench.rpc import face_available

SESSIONS = 50
ROUNDS = 20
LATENCY_MS = 50
WALL_TARGET_S = 1.5
IDLE_TARGET_MB = 2.0
PROMPT = "Read bench.txt until you are told to stop."


async def agentls_run(url: str, tmp: Path, sessions: int) -> dict[str, float]:
    model = f"slow:{ROUNDS}:{LATENCY_MS}"
    async with lsp_server(tmp, bench_options(model, url), stderr=tmp / "lsp.log") as peer:
        warm = await new_session(peer, tmp)
        await turn(peer, warm, PROMPT)
        await asyncio.sleep(0.2)
        before = rss_kb(peer.pid) or 0
        ids = [await new_session(peer, tmp) for _ in range(sessions)]
        await asyncio.sleep(0.2)
        fresh = rss_kb(peer.pid) or 0
        cpu0 = cpu_seconds(peer.pid) or 0.0
        t0 = time.perf_counter()
        results = await gather_turns(peer, ids, PROMPT)
        wall = time.perf_counter() - t0
        cpu = (cpu_seconds(peer.pid) or 0.0) - cpu0
        await asyncio.sleep(0.5)  # spawned after-turn work (titles) settles
        after = rss_kb(peer.pid) or 0
        peak = peak_rss_kb(peer.pid) or 0
    bad = [r for r in results if not r.get("completed") or r.get("apiCalls") != ROUNDS + 1]
    if bad:
        raise RuntimeError(f"{len(bad)} of {sessions} turns did not run as scripted: {bad[0]}")
    calls = sessions * (ROUNDS + 1)
    return {"wall": wall, "cpu_ms_per_call": cpu * 1000 / calls, "peak_mb": peak / 1024, "fresh_mb": (fresh - before) / 1024 / sessions,
            "idle_mb": (after - before) / 1024 / sessions, "base_mb": before / 1024}


async def raw_run(url: str, ws: Path, sessions: int) -> tuple[float, float]:
    """(wall seconds, CPU ms per provider call) of ``sessions`` raw loops, each with its own client,
    streaming and persisting each round (one SQLite file, as the server has one store).

    One client per loop, because a single httpx client shared by 50 concurrent loops is far slower
    (httpcore's pool; encode/httpx#3215), and the baseline should be the best a minimal agent gets.
    """
    system, schemas = await wire_setup(url, ws)
    case = _SlowCase(ROUNDS, True, True)
    clients = [httpx.AsyncClient(timeout=60) for _ in range(sessions)]
    store = RawStore(ws / f"raw-{time.monotonic_ns()}.db")
    try:
        await raw_turn(clients[0], url, ws, case, system, schemas, store, "warm")
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        await asyncio.gather(*(raw_turn(c, url, ws, case, system, schemas, store, f"s{i}")
                               for i, c in enumerate(clients)))
        wall = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
    finally:
        store.close()
        for c in clients:
            await c.aclose()
    return wall, cpu * 1000 / (sessions * (ROUNDS + 1))


class _SlowCase(Case):
    """The raw loop's case, posting the slow model's name."""

    @property
    def model(self) -> str:
        return f"slow:{ROUNDS}:{LATENCY_MS}"


async def measure(quick: bool) -> dict[str, float]:
    sessions = 10 if quick else SESSIONS
    reps = 1 if quick else 3
    figures: dict[str, list[float]] = {}
    with provider() as prov, tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "bench.txt").write_text(bench_file_text())
        for _ in range(reps):
            for key, value in (await agentls_run(prov.openai_url, tmp, sessions)).items():
                figures.setdefault(key, []).append(value)
            wall, cpu = await raw_run(prov.openai_url, tmp, sessions)
            figures.setdefault("raw", []).append(wall)
            figures.setdefault("raw_cpu_ms_per_call", []).append(cpu)
    out = {k: median(v) for k, v in figures.items()}
    out["sessions"] = sessions
    return out


def rows_from(f: dict[str, float]) -> list[Row]:
    n = int(f["sessions"])
    ideal = (ROUNDS + 1) * LATENCY_MS / 1000
    return [
        Row(f"concurrency: {n} sessions × {ROUNDS}-round turn, {LATENCY_MS} ms model latency (wall)",
            f"{f['wall']:.2f} s", f"{f['raw']:.2f} s (raw loops; ideal {ideal:.2f} s)", fmt_ratio(f["wall"], f["raw"]),
            f"≤ {WALL_TARGET_S} s" if n == SESSIONS else f"(≤ {WALL_TARGET_S} s is for {SESSIONS} sessions)",
            ok=f["wall"] <= WALL_TARGET_S if n == SESSIONS else None),
        Row("  CPU time per provider call (server process / raw loops' process)", f"{f['cpu_ms_per_call']:.2f} ms",
            f"{f['raw_cpu_ms_per_call']:.2f} ms (raw loops)", fmt_ratio(f["cpu_ms_per_call"], f["raw_cpu_ms_per_call"]),
            ""),
        Row("  peak RSS of the server", f"{f['peak_mb']:.0f} MB", f"{f['base_mb']:.0f} MB (after one warm turn)",
            "", ""),
        Row("  RSS per idle session (after its turn)", f"{f['idle_mb']:.2f} MB", "", "",
            f"≤ {IDLE_TARGET_MB:.0f} MB", ok=f["idle_mb"] <= IDLE_TARGET_MB),
        Row("  RSS per idle session (fresh, never run)", f"{f['fresh_mb']:.2f} MB", "", "",
            f"≤ {IDLE_TARGET_MB:.0f} MB", ok=f["fresh_mb"] <= IDLE_TARGET_MB),
    ]


def run(quick: bool = False) -> list[Row]:
    if not face_available("lsp"):
        return [Row(f"concurrency: 50 sessions × {ROUNDS}-round turn", "n/a (face not available)",
                    target=f"≤ {WALL_TARGET_S} s")]
    return rows_from(asyncio.run(measure(quick)))


def main(argv: list[str] | None = None) -> int:
    return cli("concurrency", run, argv)


if __name__ == "__main__":
    sys.exit(main())
