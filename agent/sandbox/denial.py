"""Did the sandbox make this command fail? Read from what failed commands print.

A write the sandbox refused shows as ``Read-only file system`` (bubblewrap), ``Permission denied``
(Landlock) or ``Operation not permitted`` (Seatbelt), on a path outside what is writable; a connection
it refused, with the network off, as an unreachable network, a failed name lookup, a refused connection
(bubblewrap's loopback is its own, with nothing listening) or a denied ``connect``. A ``Permission
denied`` naming only paths the sandbox lets the command write comes from the files' own permissions,
not the sandbox.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .policy import BUBBLEWRAP, Confinement

_READ_ONLY = re.compile(r"read-only file system|\bEROFS\b", re.IGNORECASE)
_DENIED = re.compile(r"permission denied|\bEACCES\b|operation not permitted|\bEPERM\b", re.IGNORECASE)
_NETWORK = re.compile(
    r"network is unreachable|\bENETUNREACH\b|could not resolve host|temporary failure in name resolution|"
    r"name or service not known|\bEAI_AGAIN\b|getaddrinfo (failed|ENOTFOUND|EAI_AGAIN)|"
    r"nodename nor servname provided|failed to establish a new connection|no address associated with hostname|"
    r"connection refused|\bECONNREFUSED\b|couldn't connect to server|unable to connect|could not connect",
    re.IGNORECASE)
_QUOTED = re.compile(r"""'([^'\n]+)'|"([^"\n]+)"|‘([^’\n]+)’|`([^`'\n]+)'""")
_ABSOLUTE = re.compile(r"(?:^|(?<=\s))(/[^\s:,'\"]+)")
_BEFORE_ERROR = re.compile(r"([^\s:'\"]*[./][^\s:'\"]*): (?:\[Errno \d+\] )?"
                           r"(?:read-only|permission denied|operation not permitted)", re.IGNORECASE)
_PROGRAM = re.compile(r"^[^\s:'\"]+: (?:line \d+: |\d+: )?")
_CONNECT = re.compile(r"connect|socket", re.IGNORECASE)
MAX_LINE = 300


@dataclass(frozen=True)
class Denial:
    kind: str  # "write" or "network"
    line: str  # the line of output that shows it

    def describe(self, mechanism: str) -> str:
        what = "a write outside the workspace" if self.kind == "write" else "network access"
        return f"the sandbox ({mechanism}) denied {what}: {self.line}"


def find_denial(output: str, exit_code: int | None, confinement: Confinement, cwd: Path) -> Denial | None:
    """The sandbox's refusal in a failed command's output, or None (a command that succeeded was not
    stopped by the sandbox, whatever it printed)."""
    if exit_code == 0:
        return None
    network_off = not confinement.network
    write_sign = _READ_ONLY if confinement.mechanism == BUBBLEWRAP else _DENIED
    for raw in output.splitlines():
        line = raw.strip()[:MAX_LINE]
        if network_off and _NETWORK.search(line):
            return Denial("network", line)
        if not (write_sign.search(line) or _READ_ONLY.search(line)):
            continue
        paths = _paths(line, cwd)
        if paths and all(_writable(p, confinement) for p in paths):
            continue  # the files' own permissions, inside what the sandbox allows
        if not paths and network_off and confinement.mechanism != BUBBLEWRAP and _CONNECT.search(output):
            return Denial("network", line)  # Landlock refuses connect() with EACCES
        return Denial("write", line)
    return None


def _paths(line: str, cwd: Path) -> list[Path]:
    """The paths a line of output names (quoted, absolute, or file-like just before the error), resolved
    the way the command saw them: relative to its directory, through symlinks."""
    line = _PROGRAM.sub("", line, count=1)  # "sh: 1: ", "bash: line 2: ", "/usr/bin/cp: " name no target
    words = [w for group in _QUOTED.findall(line) for w in group if w]
    words += _ABSOLUTE.findall(line) + _BEFORE_ERROR.findall(line)
    found: list[Path] = []
    for word in words:
        try:
            found.append((cwd / word).resolve())
        except (OSError, RuntimeError, ValueError):
            continue
    return found


def _writable(path: Path, confinement: Confinement) -> bool:
    allowed = (confinement.workspace, *confinement.writable, Path("/tmp"), Path("/dev/null"))
    return any(path == root or root in path.parents for root in allowed)
