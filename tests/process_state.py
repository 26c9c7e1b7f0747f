"""Whether a process is running, as the suites that outlive-check servers need it."""

from __future__ import annotations

from pathlib import Path


def alive(pid: int) -> bool:
    """Running, not a zombie: the suite's pytest is a child subreaper (agent/process_group.py), so a process that
    exited is its zombie until reaped, and ``kill(pid, 0)`` still succeeds."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
