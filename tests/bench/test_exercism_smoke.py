"""Smoke test of bench/exercism.py without the model: the pick, the task folder, the judge and the table, on
a tiny Exercism-shaped checkout made here (the real exercises are never in this repository). The checks
(tests/bench/exercism_checks.py) run in a child interpreter: in this one ``bench`` is this test package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHECKS = Path(__file__).with_name("exercism_checks.py")


def _run(*args: str) -> None:
    proc = subprocess.run([sys.executable, str(CHECKS), *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_the_pick_skips_what_it_must_and_the_folder_never_shows_the_example(tmp_path: Path) -> None:
    _run("pick", str(tmp_path))


def test_the_table_counts_passes_unchanged_stubs_and_false_successes() -> None:
    _run("table")


def test_a_python_without_pytest_is_refused_before_any_agent_runs(tmp_path: Path) -> None:
    """The judge is pytest: in a venv without it every try would count as failing (a real run lost that way)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True, timeout=120)
    bare = tmp_path / "venv" / "bin" / "python"
    out = tmp_path / "results.jsonl"
    proc = subprocess.run([str(bare), str(CHECKS.parents[2] / "bench" / "exercism.py"), "--exercises", str(tmp_path),
                           "--agents", "bare", "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "pytest" in proc.stderr and str(bare) in proc.stderr
    assert not out.exists()
