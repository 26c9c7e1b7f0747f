"""Real MCP servers for the tests: the lab server (our faults), PyPI's mcp-server-time, npm's servers."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
LAB = HERE / "servers" / "lab.py"
NODE_DIR = HERE / "node"


def lab(mode: str = "ok", state: Path | None = None, **extra: Any) -> dict[str, Any]:
    """A ``{command, args}`` entry for the lab server in ``mode``."""
    args = [str(LAB), mode] + ([str(state)] if state is not None else [])
    return {"command": sys.executable, "args": args, **extra}


def time_server() -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def node_bin(name: str) -> str:
    """The npm server's executable, installed with ``npm ci`` on first use (skips without Node 20+)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js 20+ and npm are needed for the npm MCP servers (not found on PATH)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 20:
        pytest.skip(f"the npm MCP servers need Node 20+, found {version}")
    path = NODE_DIR / "node_modules" / ".bin" / name
    if not path.exists():
        subprocess.run([npm, "ci", "--silent", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=600)
    return str(path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc; zombies do not count)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def started_pids(state: Path) -> list[int]:
    return [int(p.name.split("-", 1)[1]) for p in state.glob("started-*")] if state.exists() else []


def env_without_keys() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
