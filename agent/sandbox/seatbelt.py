"""macOS: ``sandbox-exec`` with a Seatbelt profile of the same rules (writes only in the workspace, the
temporary folders and the extra paths, but not the repository's hooks and config; no network unless
allowed; later rules win). The paths travel as ``-D``
parameters, never spliced into the profile's text.

It cannot be run on the Linux machines the test suite runs on: tests check the command line and the
profile's text only (docs/reliability.md says so).
"""

from __future__ import annotations

from pathlib import Path

from .policy import Confinement

PROGRAM = "/usr/bin/sandbox-exec"

BASE = """(version 1)
(allow default)
(deny file-write*)
(allow file-write*
  (subpath (param "WORKSPACE"))
  (subpath "/private/tmp")
  (subpath "/private/var/folders")
  (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/dtracehelper")
  (regex #"^/dev/ttys[0-9]+$")%s)
(deny file-write* (subpath (param "GIT_HOOKS")) (literal (param "GIT_CONFIG")))
"""
NO_NETWORK = """(deny network*)
(allow network* (remote unix-socket))
"""


def profile(confinement: Confinement) -> str:
    extra = "".join(f'\n  (subpath (param "WRITABLE_{i}"))' for i in range(len(confinement.writable)))
    return BASE % extra + ("" if confinement.network else NO_NETWORK)


def seatbelt_argv(program: str, confinement: Confinement, cwd: Path, argv: list[str]) -> list[str]:
    ws = confinement.workspace
    params = ["-D", f"WORKSPACE={ws}", "-D", f"GIT_HOOKS={ws / '.git/hooks'}", "-D", f"GIT_CONFIG={ws / '.git/config'}"]
    for i, path in enumerate(confinement.writable):
        params += ["-D", f"WRITABLE_{i}={path}"]
    return [program or PROGRAM, "-p", profile(confinement), *params, *argv]
