"""Commands see the workspace's own virtual environment.

When the workspace root has a Python virtual environment (``.venv/`` or ``venv/`` with a
``pyvenv.cfg``), commands the agent runs get its ``bin`` (``Scripts`` on Windows) first on ``PATH`` and
``VIRTUAL_ENV`` set, as if it were activated: ``pytest`` is the project's pytest, not a system one.
Nothing changes for a workspace without one.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio

NAMES = (".venv", "venv")


async def venv_env(root: Path) -> dict[str, str] | None:
    for name in NAMES:
        venv = root / name
        bindir = venv / ("Scripts" if os.name == "nt" else "bin")
        if await anyio.Path(venv / "pyvenv.cfg").is_file() and await anyio.Path(bindir).is_dir():
            path = os.environ.get("PATH", "")
            return {"PATH": f"{bindir}{os.pathsep}{path}" if path else str(bindir), "VIRTUAL_ENV": str(venv)}
    return None
