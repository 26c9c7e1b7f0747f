"""A local model server that outlives the run that started it (``local_keep_alive``, docs/local-model.md).

Every ``agentls run`` used to start llama.cpp and load the model (2.6 s), then restore the processed system
prompt from disk (2.3 s), before its first token. With a keep-alive, the first run starts the server
detached from itself and the next runs use it while it is loaded and its prompt cache is warm.

What the processes share, in the cache directory (``<cache>/servers/<key>.*``, ``key`` naming the model
file, its size and mtime, and the context size):

- ``.json``, the registry: the server's URL (127.0.0.1 only), pid and model id, written by the server once
  it answers ``/health`` and removed by it before it exits;
- ``.lease``: every process using the server holds a shared ``flock`` on it, and touches it when done.
  The server exits only when it can take the lock exclusively (nobody uses it: a process that dies
  drops its lock with it) and the file was last touched more than ``keep_alive`` seconds ago;
- ``.lock``: held exclusively while a process finds or starts the server, so two runs that start at the
  same time share one server.

POSIX only (``fcntl``); elsewhere, and with ``local_keep_alive = 0``, the server ends with the process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

SUPPORTED = fcntl is not None
POLL_SECONDS = 1.0  # how often the server looks at its lease


@dataclass(frozen=True)
class Paths:
    registry: Path
    lease: Path
    lock: Path


def paths_for(directory: Path, model_id: str) -> Paths:
    key = hashlib.sha256(model_id.encode()).hexdigest()[:16]
    return Paths(directory / f"{key}.json", directory / f"{key}.lease", directory / f"{key}.lock")


def _open(path: Path) -> IO[bytes]:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
    return os.fdopen(fd, "r+b")


def hold_shared(path: Path) -> IO[bytes]:
    """The lease, held shared until ``let_go`` (blocking: in a thread). Waits while a server that decided to
    exit holds it exclusively; it is gone then."""
    f = _open(path)
    assert fcntl is not None
    fcntl.flock(f.fileno(), fcntl.LOCK_SH)
    return f


def let_go(f: IO[bytes], path: Path) -> None:
    """Touch the lease (the idle time counts from here) and drop this process's hold."""
    with contextlib.suppress(OSError):
        os.utime(path)
    with contextlib.suppress(OSError):
        f.close()


def lock_start(path: Path) -> IO[bytes]:
    """Held exclusively (until closed) while this process finds or starts the server (blocking: in a thread)."""
    f = _open(path)
    assert fcntl is not None
    fcntl.flock(f.fileno(), fcntl.LOCK_EX)
    return f


def read_registry(path: Path, model_id: str) -> dict[str, Any] | None:
    """The registered server when it is for ``model_id``, on 127.0.0.1, and its process is alive; else None
    (a missing, unreadable or foreign file is no server)."""
    try:
        with open(path, "rb") as f:
            value = json.loads(f.read(65536))
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict) or value.get("model_id") != model_id:
        return None
    url, pid = value.get("url"), value.get("pid")
    if not isinstance(url, str) or not url.startswith("http://127.0.0.1:") or not isinstance(pid, int) or pid <= 1:
        return None
    return value if pid_alive(pid, others=False) else None  # another user's process may have that pid now


def pid_alive(pid: int, *, others: bool = True) -> bool:
    """The process exists (``others``: also when it is another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return others
    return True


def write_registry(path: Path, payload: dict[str, Any]) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(json.dumps(payload).encode())
    os.replace(tmp, path)


def idle_long_enough(lease: Path, keep_alive: float) -> bool:
    """In the server: nobody holds the lease and it was last touched over ``keep_alive`` seconds ago. Takes the
    lease exclusively while it decides; when it says True the lock is kept (the process then exits)."""
    try:
        f = _open(lease)
    except OSError:
        return False
    assert fcntl is not None
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        return False  # in use
    try:
        idle = time.time() - os.fstat(f.fileno()).st_mtime
    except OSError:
        idle = 0.0
    if idle > keep_alive:
        _kept.append(f)  # held until the process exits: a newcomer waits, then finds no server
        return True
    f.close()
    return False


_kept: list[IO[bytes]] = []


def stop_all(directory: Path) -> int:
    """``agentls model stop``: SIGTERM every server registered in ``directory`` whose process is alive and
    still the one registered; the number stopped."""
    import signal

    stopped = 0
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            value = json.loads(path.read_bytes()[:65536])
        except (OSError, ValueError):
            continue
        ident = value.get("model_id") if isinstance(value, dict) else None
        found = read_registry(path, ident) if isinstance(ident, str) else None
        if found is None:
            continue
        try:
            os.kill(int(found["pid"]), signal.SIGTERM)
            stopped += 1
        except OSError:
            pass
        with contextlib.suppress(OSError):
            path.unlink()
    return stopped
