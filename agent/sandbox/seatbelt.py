"""macOS: ``sandbox-exec`` with a Seatbelt profile of the same rules (writes only in the workspace, the
temporary folders and the extra paths, but not what is protected (``protect.py``: git's hooks and config,
agentls's own files), nor a rename or removal of any folder on the way to one; no network unless
allowed; later rules win). The paths travel as ``-D`` parameters, never spliced into the profile's text.

It cannot be run on the Linux machines the test suite runs on: tests check the command line and the
profile's text only (docs/reliability.md says so).
"""

from __future__ import annotations

from pathlib import Path

from .policy import Confinement
from .protect import agentls_paths, layout, workspace_paths

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
"""
TEMP = (Path("/private/tmp"), Path("/private/var/folders"))
NO_NETWORK = """(deny network*)
(allow network* (remote unix-socket))
"""


def guarded(confinement: Confinement) -> tuple[list[Path], list[Path]]:
    """(the folders on the way to a protected path, which may not be renamed or removed; the protected
    paths, which may not be written at all), inside what is writable."""
    protected = [*agentls_paths(), *workspace_paths(confinement.workspace), *confinement.protected]
    return layout([confinement.workspace, *confinement.writable, *TEMP], protected)


def profile(confinement: Confinement) -> str:
    pins, readonly = guarded(confinement)
    extra = "".join(f'\n  (subpath (param "WRITABLE_{i}"))' for i in range(len(confinement.writable)))
    deny = [f'(literal (param "PIN_{i}"))' for i in range(len(pins))]
    deny += [f'(subpath (param "PROTECTED_{i}"))' for i in range(len(readonly))]
    rules = f"(deny file-write* {' '.join(deny)})\n" if deny else ""
    return BASE % extra + rules + ("" if confinement.network else NO_NETWORK)


def seatbelt_argv(program: str, confinement: Confinement, cwd: Path, argv: list[str]) -> list[str]:
    params = ["-D", f"WORKSPACE={confinement.workspace}"]
    for i, path in enumerate(confinement.writable):
        params += ["-D", f"WRITABLE_{i}={path}"]
    pins, readonly = guarded(confinement)
    params += [x for i, path in enumerate(pins) for x in ("-D", f"PIN_{i}={path}")]
    params += [x for i, path in enumerate(readonly) for x in ("-D", f"PROTECTED_{i}={path}")]
    return [program or PROGRAM, "-p", profile(confinement), *params, *argv]
