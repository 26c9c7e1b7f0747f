"""Leases: one process at a time drives a session.

A process running a turn holds the session's row in ``leases`` (its store's owner id, pid, host, the
process's start time) and renews ``heartbeat`` every few seconds. Another process that wants to run a
turn on that session is refused with ``SessionBusy`` while the holder is alive. A lease is free when
its holder released it, when its heartbeat is older than ``LEASE_TTL``, or at once when the holder was
on this host and its process is gone (killed, crashed: its pid is dead, or now belongs to a process
started later).
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import aiosqlite

LEASE_TTL = 30.0
HEARTBEAT_EVERY = 5.0
HOST = socket.gethostname()


def process_start(pid: int) -> float | None:
    """When ``pid`` started, in clock ticks since boot (tells a reused pid apart); None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        if fields[0] == b"Z":  # a zombie has ended
            return None
        return float(fields[19])
    except (OSError, IndexError, ValueError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return 0.0  # alive, start unknown (no /proc)


START = process_start(os.getpid()) or 0.0


@dataclass(frozen=True)
class LeaseHolder:
    session_id: str
    owner: str
    pid: int
    host: str
    started: float
    heartbeat: float  # unix time
    acquired_at: float

    def alive(self, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        if now - self.heartbeat > LEASE_TTL:
            return False
        if self.host == HOST:
            start = process_start(self.pid)
            return start is not None and (start == self.started or self.started == 0.0 or start == 0.0)
        return True

    def describe(self, now: float | None = None) -> str:
        now = time.time() if now is None else now
        since = datetime.fromtimestamp(self.acquired_at, UTC).strftime("%H:%M:%S UTC")
        where = "this host" if self.host == HOST else f"host {self.host}"
        return (f"agentls process {self.pid} on {where}, running a turn since {since}, last heartbeat "
                f"{max(0.0, now - self.heartbeat):.0f} s ago")

    def to_json(self) -> dict[str, object]:
        return {"pid": self.pid, "host": self.host, "since": datetime.fromtimestamp(self.acquired_at, UTC).isoformat(),
                "heartbeatAgeSeconds": round(max(0.0, time.time() - self.heartbeat), 1)}


class SessionBusy(RuntimeError):
    """Another live process holds the session's lease: this one must not run a turn on it."""

    def __init__(self, session_id: str, holder: LeaseHolder) -> None:
        self.session_id = session_id
        self.holder = holder
        self.pending_steer: str | None = None  # steers the refused turn had accepted (set by the loop): not delivered
        super().__init__(f"session {session_id} is busy: a turn is running in another agentls process "
                         f"({holder.describe()}). Wait for that turn to end, or stop it there; a process that is "
                         f"gone gives the session up at once (on another host after {LEASE_TTL:g} s without a "
                         "heartbeat)")


SCHEMA = """CREATE TABLE leases (
    session_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started REAL NOT NULL,
    heartbeat REAL NOT NULL,
    acquired_at REAL NOT NULL
)"""
_COLUMNS = "session_id, owner, pid, host, started, heartbeat, acquired_at"


async def holder(conn: aiosqlite.Connection, session_id: str) -> LeaseHolder | None:
    """The lease's holder (alive or not), None when nobody holds it or the table does not exist."""
    try:
        rows = list(await conn.execute_fetchall(f"SELECT {_COLUMNS} FROM leases WHERE session_id = ?",
                                                (session_id,)))
    except aiosqlite.OperationalError:  # an old read-only database without the table
        return None
    if not rows:
        return None
    sid, owner, pid, host, started, heartbeat, acquired = rows[0]
    return LeaseHolder(str(sid), str(owner), int(pid), str(host), float(started), float(heartbeat), float(acquired))


async def acquire(conn: aiosqlite.Connection, session_id: str, owner: str) -> None:
    """Take the lease inside the caller's write transaction; ``SessionBusy`` when a live other holds it."""
    current = await holder(conn, session_id)
    now = time.time()
    if current is not None and current.owner != owner and current.alive(now):
        raise SessionBusy(session_id, current)
    acquired = current.acquired_at if current is not None and current.owner == owner else now
    await conn.execute(f"INSERT OR REPLACE INTO leases ({_COLUMNS}) VALUES (?,?,?,?,?,?,?)",
                       (session_id, owner, os.getpid(), HOST, START, now, acquired))


async def renew(conn: aiosqlite.Connection, session_ids: list[str], owner: str) -> None:
    marks = ",".join("?" * len(session_ids))
    await conn.execute(f"UPDATE leases SET heartbeat = ? WHERE owner = ? AND session_id IN ({marks})",
                       (time.time(), owner, *session_ids))


async def release(conn: aiosqlite.Connection, session_id: str, owner: str) -> None:
    await conn.execute("DELETE FROM leases WHERE session_id = ? AND owner = ?", (session_id, owner))
