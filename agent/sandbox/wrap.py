"""The command line that runs ``argv`` under a confinement."""

from __future__ import annotations

import os
from pathlib import Path

from .bwrap import bwrap_argv
from .policy import BUBBLEWRAP, LANDLOCK, SEATBELT, Confinement
from .protect import agentls_paths, carve
from .seatbelt import seatbelt_argv

LAUNCHER = str(Path(__file__).resolve().with_name("landlock.py"))
# The launcher imported as a top-level module (its cached bytecode spares a compile on every command),
# from this folder only: -I keeps the working directory, which the command controls, off sys.path.
BOOT = (f"import sys; sys.path[:0] = [{str(Path(LAUNCHER).parent)!r}]; import landlock; "
        "sys.exit(landlock.main(sys.argv[1:]))")
# Landlock cannot give a command a private /tmp: the temporary folders stay writable (shared).
LANDLOCK_TEMP = ("/tmp", "/var/tmp", "/dev/shm")


def confine(argv: list[str], confinement: Confinement, cwd: Path) -> list[str]:
    if confinement.mechanism == BUBBLEWRAP:
        return bwrap_argv(confinement.program, confinement, cwd, argv)
    if confinement.mechanism == LANDLOCK:
        temp = [*LANDLOCK_TEMP, *([os.environ["TMPDIR"]] if os.environ.get("TMPDIR", "").startswith("/") else [])]
        # Landlock can only allow whole hierarchies: an extra path that holds agentls's own files is
        # allowed around them (protect.carve). The workspace and the temporary folders stay whole.
        writable = carve(confinement.writable, [*agentls_paths(), *confinement.protected])
        paths = [str(confinement.workspace), *map(str, writable), *temp]
        return [confinement.program, "-I", "-S", "-c", BOOT, "net" if confinement.network else "nonet", *paths,
                "--", *argv]
    if confinement.mechanism == SEATBELT:
        return seatbelt_argv(confinement.program, confinement, cwd, argv)
    raise ValueError(f"unknown sandbox mechanism {confinement.mechanism!r}")
