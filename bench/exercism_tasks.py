"""Exercism Python practice exercises as tasks for bench/exercism.py: the pick, the folder, the judge.

The pick is deterministic and documented in bench/README.md ("Outside work: Exercism"): every exercise
of ``exercises/practice`` whose ``.meta/config.json`` lists exactly one solution file and one test file,
with no editor or extra files, whose tests import only the standard library, pytest and the solution
module, and whose stub fails its own tests; ordered by the sha256 of the exercise's name (so the pick
spreads over the alphabet, and a new exercise upstream moves none of the others), the first ``count``.
``.meta/example.py`` is never copied: each task folder holds the stub, the test file and INSTRUCTIONS.md
(``.docs/instructions.md``, then ``.docs/instructions.append.md`` when there is one).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PROMPT = ("Implement the stub in {solution} so that it satisfies INSTRUCTIONS.md. Keep the function and class "
          "names. Use only the standard library.")
RETRY = ("{output}\n\nThe tests in {test} fail as shown above. The tests are correct, don't change them. "
         "Fix the code in {solution} to resolve the errors.")
MAX_TEST_OUTPUT = 4000
ALLOWED_IMPORTS = frozenset({"pytest"})


@dataclass(frozen=True)
class Exercise:
    name: str
    folder: Path  # the exercise's own folder in the checkout (read, never written)
    solution: str  # e.g. acronym.py
    test: str  # e.g. acronym_test.py

    @property
    def prompt(self) -> str:
        return PROMPT.format(solution=self.solution)

    def retry_prompt(self, output: str) -> str:
        return RETRY.format(output=output.strip(), test=self.test, solution=self.solution)


def practice_dir(root: Path) -> Path:
    """``root`` may be the checkout, its ``exercises`` or its ``exercises/practice``."""
    for candidate in (root / "exercises" / "practice", root / "practice", root):
        if candidate.is_dir() and any((p / ".meta" / "config.json").is_file() for p in candidate.iterdir()
                                      if p.is_dir()):
            return candidate
    raise SystemExit(f"no Exercism practice exercises under {root} (see bench/README.md for how to get them)")


def _stdlib_only(test_file: Path, module: str) -> bool:
    try:
        tree = ast.parse(test_file.read_text())
    except (SyntaxError, UnicodeDecodeError):
        return False
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.level == 0 else ["."]
        for name in names:
            top = name.split(".")[0]
            if top not in sys.stdlib_module_names and top not in ALLOWED_IMPORTS and top != module:
                return False
    return True


def _candidate(folder: Path) -> Exercise | None:
    try:
        config = json.loads((folder / ".meta" / "config.json").read_text())
    except (OSError, ValueError):
        return None
    files = config.get("files") or {}
    solution, test = files.get("solution") or [], files.get("test") or []
    if len(solution) != 1 or len(test) != 1 or files.get("editor") or files.get("invalidator"):
        return None
    if not (folder / ".docs" / "instructions.md").is_file() or not (folder / solution[0]).is_file():
        return None
    if not (folder / test[0]).is_file() or not _stdlib_only(folder / test[0], Path(solution[0]).stem):
        return None
    return Exercise(folder.name, folder, solution[0], test[0])


def instructions(ex: Exercise) -> str:
    text = (ex.folder / ".docs" / "instructions.md").read_text()
    append = ex.folder / ".docs" / "instructions.append.md"
    if append.is_file():
        text = text.rstrip("\n") + "\n\n" + append.read_text()
    return text


def lay_out(ex: Exercise, into: Path) -> Path:
    """A fresh folder with the stub, the tests and INSTRUCTIONS.md (never .meta/example.py)."""
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    shutil.copyfile(ex.folder / ex.solution, into / ex.solution)
    shutil.copyfile(ex.folder / ex.test, into / ex.test)
    (into / "INSTRUCTIONS.md").write_text(instructions(ex))
    return into


def judge(folder: Path, ex: Exercise, timeout: float = 120) -> tuple[bool, str]:
    """The exercise's own tests on the folder as the agent left it: (passed, pytest's output, capped)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "--tb=short", "-p", "no:cacheprovider", "--no-header", ex.test]
    try:
        proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})  # no plugin's warnings
    except subprocess.TimeoutExpired:
        return False, f"the tests did not finish in {timeout:.0f} s"
    out = proc.stdout + proc.stderr
    if len(out) > MAX_TEST_OUTPUT:  # the first failures and pytest's summary line
        out = out[:MAX_TEST_OUTPUT - 400] + "\n[...]\n" + out[-400:]
    return proc.returncode == 0, out


_STUB_CHECK = """
import importlib, json, sys, unittest
out = {}
for name, folder, module in json.loads(sys.argv[1]):
    sys.path.insert(0, folder)
    for m in [m for m in sys.modules if m == module or m == module.removesuffix("_test")]:
        del sys.modules[m]
    try:
        suite = unittest.defaultTestLoader.loadTestsFromModule(importlib.import_module(module))
        result = unittest.TextTestRunner(stream=open("/dev/null", "w"), verbosity=0).run(suite)
        out[name] = result.wasSuccessful() and result.testsRun > 0
    except BaseException:
        out[name] = False
    sys.path.remove(folder)
print(json.dumps(out))
"""


def _stubs_passing(exercises: list[Exercise], scratch: Path) -> set[str]:
    """The exercises whose stub already passes its tests, checked in one interpreter (unittest: every
    Exercism test file is a ``unittest.TestCase``); the judge proper is pytest, one run per try."""
    folders = [(ex.name, str(lay_out(ex, scratch / "stub-check" / ex.name)), Path(ex.test).stem) for ex in exercises]
    proc = subprocess.run([sys.executable, "-c", _STUB_CHECK, json.dumps(folders)], capture_output=True, text=True,
                          timeout=600)
    shutil.rmtree(scratch / "stub-check", ignore_errors=True)
    results: dict[str, bool] = json.loads(proc.stdout.strip().splitlines()[-1])
    return {name for name, passed in results.items() if passed}


def pick(root: Path, count: int, scratch: Path) -> list[Exercise]:
    """The first ``count`` eligible exercises in sha256-of-name order (see the module docstring)."""
    practice = practice_dir(root)
    folders = sorted((p for p in practice.iterdir() if p.is_dir()),
                     key=lambda p: hashlib.sha256(p.name.encode()).hexdigest())
    candidates = [ex for ex in map(_candidate, folders) if ex is not None]
    passing = _stubs_passing(candidates, scratch)  # a refactoring exercise whose stub already passes: nothing to do
    return [ex for ex in candidates if ex.name not in passing][:count]
