"""examples/stub, the README's "implement the stub" example: its tests fail on the stub and pass on an
implementation of INSTRUCTIONS.md, so what agentls's tests check (docs/loop.md §9.11) can be met."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "stub"
SOLVED = '''import re


def slugify(title):
    return "-".join(re.findall(r"[a-z0-9]+", title.lower()))
'''


def _run(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-B", "-m", "unittest", "slug_test.py"], cwd=folder, capture_output=True,
                          text=True, timeout=60)


def test_the_stub_fails_its_tests_and_an_implementation_passes(tmp_path: Path) -> None:
    folder = tmp_path / "stub"
    shutil.copytree(EXAMPLE, folder)
    assert _run(folder).returncode == 1
    (folder / "slug.py").write_text(SOLVED)
    done = _run(folder)
    assert done.returncode == 0, done.stderr
    assert "Ran 5 tests" in done.stderr
