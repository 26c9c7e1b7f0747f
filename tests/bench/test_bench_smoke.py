"""Smoke test of the benchmarks: ``bench/run.py --quick`` runs and prints its table. Timings are never checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_run_prints_a_table() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--only",
                           "loop_overhead,parallel_tools"], check=False, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "| metric | agentls | baseline | ratio | target |" in lines, proc.stdout
    rows = [line for line in lines if line.startswith("| ") and "---" not in line][1:]
    assert any(r.startswith("| loop overhead, N=20") for r in rows), proc.stdout
    assert any(r.startswith("| parallel tools") for r in rows), proc.stdout
    assert not any("| error" in r for r in rows), proc.stdout + proc.stderr
    assert "Machine:" in proc.stdout
