"""What the real-editor suites share: whether to run them, and where their artifacts go.

``AGENTLS_REAL_EDITORS`` decides (``./scripts/test --no-real-editors`` sets it to ``skip``; ``.ci/run`` to
``require``):

- ``skip``: the suites that drive real Helix and real VS Code are skipped;
- ``require``: an editor that cannot be installed is a failure, not a skip (CI);
- anything else (``auto``, unset): install what can be installed (cached in ~/.cache/agentls-test), skip
  with a message otherwise.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def mode() -> str:
    value = os.environ.get("AGENTLS_REAL_EDITORS", "auto").strip().lower()
    if value in {"skip", "0", "no", "off"}:
        return "skip"
    return "require" if value == "require" else "auto"


def unavailable(why: str) -> None:
    """Skip (or fail under ``AGENTLS_REAL_EDITORS=require``) because a real editor cannot run here."""
    if mode() == "require":
        pytest.fail(f"real-editor suite required (AGENTLS_REAL_EDITORS=require), but {why}", pytrace=False)
    pytest.skip(why)


def install(script: str, env_override: str) -> str:
    """The editor's path: ``$env_override`` if set, else what ``scripts/editors/<script>`` prints (it installs
    into the cache the first time, and answers at once after that)."""
    if mode() == "skip":
        pytest.skip("AGENTLS_REAL_EDITORS=skip: the real-editor suites are skipped")
    given = os.environ.get(env_override)
    if given:
        if not Path(given).exists():
            unavailable(f"{env_override}={given} does not exist")
        return given
    proc = subprocess.run([str(ROOT / "scripts" / "editors" / script)], check=False, capture_output=True,
                          text=True, timeout=30 * 60, stdin=subprocess.DEVNULL)
    path = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    if proc.returncode != 0 or not path or not Path(path).exists():
        unavailable(f"scripts/editors/{script} failed (exit {proc.returncode}): {proc.stderr.strip()[-1500:]}")
    return path
