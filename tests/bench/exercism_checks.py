"""The checks of test_exercism_smoke.py, run as a script so that ``bench`` is the repository's package.

    python tests/bench/exercism_checks.py pick TMPDIR | table
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.exercism import report
from bench.exercism_agents import code_block
from bench.exercism_tasks import judge, lay_out, pick

TEST = "import unittest\nfrom {m} import {f}\n\n\nclass T(unittest.TestCase):\n    def test(self):\n" \
       "        self.assertEqual({f}(2), 4)\n"


def _exercise(practice: Path, name: str, *, stub: str, imports: str = "", extra: dict[str, object] | None = None
              ) -> None:
    module = name.replace("-", "_")
    folder = practice / name
    (folder / ".meta").mkdir(parents=True)
    (folder / ".docs").mkdir()
    (folder / ".docs" / "instructions.md").write_text(f"# {name}\n\nDouble the number.\n")
    (folder / ".docs" / "instructions.append.md").write_text("Use only the standard library.\n")
    (folder / ".meta" / "example.py").write_text("SECRET = 'the answer'\n")
    (folder / f"{module}.py").write_text(stub)
    (folder / f"{module}_test.py").write_text(imports + TEST.format(m=module, f="double"))
    files = {"solution": [f"{module}.py"], "test": [f"{module}_test.py"], "example": [".meta/example.py"],
             **(extra or {})}
    (folder / ".meta" / "config.json").write_text(json.dumps({"files": files}))


def pick_and_judge(tmp_path: Path) -> None:
    practice = tmp_path / "python" / "exercises" / "practice"
    _exercise(practice, "doubler", stub="def double(n):\n    pass\n")
    _exercise(practice, "done-already", stub="def double(n):\n    return 2 * n\n")  # the stub passes
    _exercise(practice, "needs-numpy", stub="def double(n):\n    pass\n", imports="import numpy\n")
    _exercise(practice, "has-editor-files", stub="def double(n):\n    pass\n", extra={"editor": ["helper.py"]})
    picked = pick(tmp_path / "python", 40, tmp_path / "scratch")
    assert [e.name for e in picked] == ["doubler"]
    (ex,) = picked
    folder = lay_out(ex, tmp_path / "task")
    assert sorted(p.name for p in folder.iterdir()) == ["INSTRUCTIONS.md", "doubler.py", "doubler_test.py"]
    assert "Use only the standard library." in (folder / "INSTRUCTIONS.md").read_text()
    assert "SECRET" not in "".join(p.read_text() for p in folder.iterdir())
    assert ex.prompt == ("Implement the stub in doubler.py so that it satisfies INSTRUCTIONS.md. Keep the function "
                         "and class names. Use only the standard library.")
    passed, output = judge(folder, ex)
    assert not passed and "failed" in output
    assert "doubler_test.py fail as shown above" in ex.retry_prompt(output)
    (folder / "doubler.py").write_text(code_block("Sure:\n```python\ndef double(n):\n    return n * 2\n```\n",
                                                  "doubler.py") or "")
    assert judge(folder, ex)[0]


def table() -> None:
    rows = [
        {"agent": "agentls", "exercise": "a", "pass1": False, "pass2": True, "seconds1": 10.0, "exit1": 0,
         "unchanged": False, "false_success1": True, "exit2": 0, "false_success2": False},
        {"agent": "agentls", "exercise": "b", "pass1": False, "pass2": False, "seconds1": 30.0, "exit1": 4,
         "unchanged": True, "false_success1": False, "exit2": 4, "false_success2": False},
        {"agent": "bare", "exercise": "a", "pass1": True, "pass2": True, "seconds1": 5.0, "exit1": None,
         "unchanged": False},
        {"agent": "bare", "exercise": "b", "pass1": False, "pass2": False, "seconds1": 7.0, "exit1": None,
         "unchanged": True},
    ]
    table = report(rows)
    assert "| agentls | 0/2 (0.0%) | 1/2 (50.0%) | 20.0 | 1 | 1 of 4 runs |" in table
    assert "| bare | 1/2 (50.0%) | 1/2 (50.0%) | 6.0 | 1 | n/a (no exit code) |" in table
    once = [{**r, "tries": 1, "pass2": r["pass1"], "exit2": None, "false_success2": False} for r in rows]
    assert "| agentls | 0/2 (0.0%) | not run (--tries 1) | 20.0 | 1 | 1 of 2 runs |" in report(once)


if __name__ == "__main__":
    if sys.argv[1] == "pick":
        pick_and_judge(Path(sys.argv[2]))
    else:
        table()
