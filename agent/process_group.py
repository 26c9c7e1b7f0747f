"""Everything one command started, found and killed: its session and process group, every process that
carries its marker in the environment, their descendants, and (when asked) whatever still holds its
output pipe.

This process becomes a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``) before the first command, so
a daemon that double-forks is re-parented here rather than to init: it stays a descendant we can see,
and once killed it is our zombie to reap. Commands are told apart by the marker, so several can run at
once and ending one never touches another's processes. What a command can still escape by (clearing
its environment *and* leaving its session *and* closing its output, then double-forking) is caught by the
OS sandbox's PID namespace, not here.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import logging
import os
import secrets
import signal
import sys
from dataclasses import dataclass, field

log = logging.getLogger("agentls.process")

MARKER_VAR = "AGENTLS_COMMAND"
KILL_ROUNDS = 8  # a process may fork while we kill its parent: look again until nothing is left
_PR_SET_CHILD_SUBREAPER = 36
_counter = itertools.count(1)
_subreaper: bool | None = None
_live: set[CommandGroup] = set()
_PYTHON = sys.executable  # the launcher's interpreter (tests may point sys.executable at a stand-in later)


def become_subreaper() -> bool:
    """Make this process the child subreaper of everything it starts (Linux); once, idempotent."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):
                pass
        if not _subreaper:
            log.info("not a child subreaper: double-forked daemons of commands may escape")
    return _subreaper


@dataclass(frozen=True)
class _Proc:
    pid: int
    ppid: int
    pgrp: int
    session: int
    zombie: bool
    started: int = 0  # clock ticks after boot


def _stat(pid: int) -> _Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return _Proc(pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0] == b"Z", int(fields[19]))
    except (OSError, IndexError, ValueError):
        return None


def _now_ticks() -> int:
    """Clock ticks since boot, as /proc/PID/stat counts a process's start."""
    try:
        with open("/proc/uptime", "rb") as f:
            return int(float(f.read().split()[0]) * os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0


def _processes() -> dict[int, _Proc]:
    found: dict[int, _Proc] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            proc = _stat(int(name))
            if proc is not None:
                found[proc.pid] = proc
    return found


def _has(pid: int, variable: bytes) -> bool:
    """Whether the process's environment holds ``variable`` (``NAME=value``) exactly."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        return False
    return environ.startswith(variable + b"\0") or b"\0" + variable + b"\0" in environ


def _holds(pid: int, link: str) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == link for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


@dataclass(eq=False)
class CommandGroup:
    """One command's processes. ``leader`` is the shell it runs in (its own session and group)."""

    marker: str = field(default_factory=lambda: f"{os.getpid()}.{next(_counter)}.{secrets.token_hex(6)}")
    leader: int | None = None
    leader_reaped: bool = False  # then its pid may be reused: only its session and group still count
    pipe: str | None = None  # "pipe:[inode]" of its output
    killed: set[int] = field(default_factory=set)
    # processes started before the command cannot carry its marker: their environment is not read
    since: int = field(default_factory=lambda: max(0, _now_ticks() - 2))
    clean: bool = False  # the leader is reaped and a look found nothing left

    def __post_init__(self) -> None:
        become_subreaper()
        _live.add(self)

    @property
    def env(self) -> dict[str, str]:
        return {MARKER_VAR: self.marker}

    def members(self, holders: bool = False) -> set[int]:
        me = os.getpid()
        table = _processes()
        variable = f"{MARKER_VAR}={self.marker}".encode()
        leader = self.leader
        found = {p.pid for p in table.values() if leader is not None and
                 (leader in (p.session, p.pgrp) or (p.pid == leader and not self.leader_reaped))}
        recent = [p for p in table.values() if not p.zombie and p.started >= self.since and p.pid != me]
        found |= {p.pid for p in recent if _has(p.pid, variable)}
        if holders and self.pipe:
            found |= {p.pid for p in recent if _holds(p.pid, self.pipe)}
        children: dict[int, list[int]] = {}
        for p in table.values():
            children.setdefault(p.ppid, []).append(p.pid)
        todo = list(found)
        while todo:  # and everything below them
            for child in children.get(todo.pop(), []):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        found.discard(me)
        return found

    def kill(self, holders: bool = False) -> int:
        """SIGKILL every member, looking again until none is left alive; then reap what is ours.
        Returns how many were alive."""
        count = 0
        for _ in range(KILL_ROUNDS):
            alive = {pid for pid in self.members(holders) if not (_stat(pid) or _Proc(0, 0, 0, 0, True)).zombie}
            if not alive:
                self.clean = self.leader_reaped
                break
            for pid in alive:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            count += len(alive - self.killed)
            self.killed |= alive
        self.reap()
        return count

    def reap(self) -> bool:
        """Collect the zombies among the killed that were re-parented to us (never the leader: its
        waiter does that). True when none of them is left."""
        me = os.getpid()
        for pid in list(self.killed):
            proc = _stat(pid)
            if proc is None:
                self.killed.discard(pid)
            elif proc.zombie and proc.ppid == me and pid != self.leader:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
                if _stat(pid) is None:
                    self.killed.discard(pid)
        return not (self.killed - {self.leader})

    def close(self) -> None:
        _live.discard(self)


def kill_all() -> int:
    """Kill every command still running in this process (the server is exiting). Returns how many
    processes were killed."""
    return sum(group.kill(holders=True) for group in list(_live))


# A tiny launcher between us and a long-lived child (an MCP server, the local model's server): it asks the
# kernel to SIGKILL it when we die (PR_SET_PDEATHSIG survives the exec), checks we did not die already,
# then becomes the real program. Standard library only, isolated (-I -S), so it starts in milliseconds.
_LAUNCH = ("import ctypes,os,sys\n"
           "ctypes.CDLL(None).prctl(1,9,0,0,0)\n"
           "if os.getppid()!=int(sys.argv[1]): os._exit(1)\n"
           "try: os.execvp(sys.argv[2],sys.argv[2:])\n"
           "except OSError as e: print('cannot run %s: %s'%(sys.argv[2],e),file=sys.stderr); os._exit(127)\n")


def dies_with_us(argv: list[str]) -> list[str]:
    """``argv`` wrapped so the process it starts is killed when this one dies, even by SIGKILL (Linux;
    elsewhere ``argv`` as it is). The child's pid is the program's own (the launcher execs it)."""
    if not sys.platform.startswith("linux"):
        return list(argv)
    return [_PYTHON, "-I", "-S", "-c", _LAUNCH, str(os.getpid()), *argv]
