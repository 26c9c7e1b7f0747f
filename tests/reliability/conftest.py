"""Fixtures shared by the reliability suites: the scripted model, workspaces and a data directory.

``AGENTLS_LONG=1`` runs the long variants (100 kills, 10,000 fuzz frames per face); the short ones
always run. Suites that spawn ``agentls lsp``/``agentls acp`` use ``lspwire.py`` (our own framing code).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


LONG = os.environ.get("AGENTLS_LONG") == "1"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = (tmp_path / "ws").resolve()
    (ws / "src").mkdir(parents=True)
    (ws / "README.md").write_text("# Demo\n\nA workspace for the reliability suites.\n")
    (ws / "notes.md").write_text("# Notes\n\n- one\n- two\n")
    (ws / "src" / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    return ws


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A private HOME and data directory for spawned servers (nothing of the real user is touched)."""
    path = (tmp_path / "home").resolve()
    path.mkdir()
    return path
