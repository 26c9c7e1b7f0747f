"""Run every benchmark and print one markdown table: metric, agentls, baseline, ratio, target.

    python bench/run.py [--quick] [--only loop_overhead,parallel_tools,...]

Each benchmark runs in its own interpreter (``python -m bench.<name> --json``), so one cannot warm up or
slow down the next. Every figure is a median over repeated runs, printed beside a baseline measured in
the same run. Nothing here fails: a benchmark that breaks prints "error" in its row, and the exit code
is 0 regardless (these are figures to beat, not tests).
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import Row, load_average, machine, rows_from_json, table

BENCHMARKS = ("loop_overhead", "startup", "parallel_tools", "concurrency", "streaming", "context", "sandbox",
              "local_model", "mcp", "delegate")


def run_one(name: str, quick: bool) -> tuple[list[Row], float]:
    module = name
    cmd = [sys.executable, "-m", f"bench.{module}", "--json"] + (["--quick"] if quick else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    took = time.perf_counter() - t0
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    if proc.returncode == 0 and last.startswith("["):
        try:
            return rows_from_json(last), took
        except (ValueError, KeyError, TypeError):
            pass
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
    print(f"bench/{module}.py failed (exit {proc.returncode}):\n  " + "\n  ".join(tail), file=sys.stderr)
    reason = tail[-1][:120] if tail else f"exit {proc.returncode}"
    return [Row(f"{name}", f"error: {reason}")], took


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/run.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a short variant: fewer repeats, smaller sizes")
    p.add_argument("--only", metavar="NAMES", help=f"comma-separated subset of: {', '.join(BENCHMARKS)}")
    args = p.parse_args(argv)
    names = list(BENCHMARKS)
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in BENCHMARKS]
        if unknown:
            p.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
        names = wanted
    started = datetime.datetime.now().astimezone()
    load_before = load_average()
    rows: list[Row] = []
    for name in names:
        print(f"running {name}...", file=sys.stderr, flush=True)
        got, took = run_one(name, args.quick)
        print(f"  {name}: {took:.1f} s", file=sys.stderr, flush=True)
        rows.extend(got)
    mode = "quick" if args.quick else "full"
    print(f"agentls benchmarks ({mode} run), {started:%Y-%m-%d %H:%M %Z}")
    print(f"Machine: {machine()}")
    print(f"Load average (1/5/15 min) before: {load_before}; after: {load_average()}")
    print("Every figure is a median over repeated runs; each baseline was measured in the same run.")
    print()
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
