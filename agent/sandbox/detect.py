"""Which mechanism works here, found once per process (per ``PATH``) and cached.

Linux: bubblewrap when ``bwrap`` is on ``PATH`` *and* a probe sandbox with the real flags starts (user
namespaces may be disabled or restricted); else Landlock when the kernel has it (ABI 1+). macOS:
``sandbox-exec``. Otherwise none, with the reasons.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import anyio

from . import landlock
from .bwrap import bwrap_argv
from .policy import BUBBLEWRAP, LANDLOCK, SEATBELT, Confinement
from .seatbelt import PROGRAM as SANDBOX_EXEC

PROBE_TIMEOUT = 10.0


@dataclass(frozen=True)
class Detected:
    mechanism: str | None  # bubblewrap, landlock, seatbelt, or None
    program: str = ""
    detail: str = ""  # "bubblewrap 0.8.0 (/usr/bin/bwrap)", "Landlock ABI 7", or why there is none
    network_confined: bool = True  # Landlock before ABI 4 cannot block TCP
    skipped: tuple[str, ...] = ()  # why the mechanisms before it were not used


# Limits what detection may pick, for diagnosis and tests: "landlock", "bubblewrap,landlock", "none".
ONLY_ENV = "AGENTLS_SANDBOX_MECHANISMS"
_cache: dict[str, Detected] = {}


async def detect() -> Detected:
    only = os.environ.get(ONLY_ENV, "").strip()
    key = f"{sys.platform}:{os.environ.get('PATH', '')}:{only}"
    found = _cache.get(key)
    if found is None:
        allowed = {m.strip() for m in only.split(",") if m.strip()} if only else None
        found = _cache[key] = await _detect(allowed)
    return found


def forget() -> None:
    """Drop the cached answer (after installing bubblewrap, say)."""
    _cache.clear()


async def _detect(allowed: set[str] | None) -> Detected:
    def ruled_out(mechanism: str) -> bool:
        if allowed is None or mechanism in allowed:
            return False
        skipped.append(f"{mechanism} is ruled out by {ONLY_ENV}={os.environ.get(ONLY_ENV)}")
        return True

    skipped: list[str] = []
    if sys.platform == "darwin":
        if ruled_out(SEATBELT):
            return Detected(None, detail="; ".join(skipped), skipped=tuple(skipped))
        if os.access(SANDBOX_EXEC, os.X_OK):
            return Detected(SEATBELT, SANDBOX_EXEC, "sandbox-exec (Seatbelt)")
        return Detected(None, detail=f"{SANDBOX_EXEC} is missing")
    if not sys.platform.startswith("linux"):
        return Detected(None, detail=f"no sandbox mechanism is known on {sys.platform}")
    bwrap = shutil.which("bwrap")
    if ruled_out(BUBBLEWRAP):
        pass
    elif bwrap is None:
        skipped.append("bubblewrap is not installed (bwrap is not on PATH)")
    else:
        problem = await _probe_bwrap(bwrap)
        if problem is None:
            return Detected(BUBBLEWRAP, bwrap, f"{await _bwrap_version(bwrap)} ({bwrap})")
        skipped.append(f"bubblewrap ({bwrap}) cannot start a sandbox here: {problem}")
    abi = 0 if ruled_out(LANDLOCK) else landlock.abi_version()
    if abi >= 1:
        net = "TCP blocked when the network is off" if abi >= 4 else "the network is NOT confined (ABI < 4)"
        return Detected(LANDLOCK, sys.executable, f"Landlock ABI {abi} (writes confined; {net})",
                        network_confined=abi >= 4, skipped=tuple(skipped))
    if allowed is None or LANDLOCK in allowed:
        skipped.append("the kernel has no Landlock (Linux 5.13+ with landlock among the LSMs)")
    return Detected(None, detail="; ".join(skipped), skipped=tuple(skipped))


async def _probe_bwrap(bwrap: str) -> str | None:
    probe = Confinement(BUBBLEWRAP, Path("/"), program=bwrap)
    argv = bwrap_argv(bwrap, probe, Path("/"), ["/bin/sh", "-c", ":"])
    argv[argv.index("--bind"):argv.index("--chdir")] = []  # nothing writable
    try:
        with anyio.fail_after(PROBE_TIMEOUT):
            done = await anyio.run_process(argv, check=False, stdin=None)
    except (OSError, TimeoutError) as exc:
        return str(exc)
    if done.returncode != 0:
        return done.stderr.decode("utf-8", "replace").strip() or f"exit code {done.returncode}"
    return None


async def _bwrap_version(bwrap: str) -> str:
    try:
        with anyio.fail_after(PROBE_TIMEOUT):
            done = await anyio.run_process([bwrap, "--version"], check=False, stdin=None)
        return done.stdout.decode().strip() or "bubblewrap"
    except (OSError, TimeoutError):
        return "bubblewrap"
