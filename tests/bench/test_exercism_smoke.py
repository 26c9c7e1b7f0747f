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
