"""The bubblewrap command line: the root read-only, the workspace and the extra paths read-write, a
private ``/tmp`` (the session's own folder: files live from one command to the next, and nobody else
sees them), a minimal ``/dev``, new PID/IPC/UTS/user namespaces, no capabilities, no network
unless allowed, and the whole sandbox killed with its parent. What runs later outside the sandbox stays
read-only and immovable (``protect.py``: git's hooks and config, agentls's own files).

Mount order matters: later mounts hide earlier ones. ``/tmp`` comes first; then what must stay visible
although it lives under ``/tmp`` (the interpreter, the venv, every ``PATH`` entry), read-only; then the
writable binds, parents first; the workspace (it may itself be under ``/tmp``); and last the pins and
the read-only binds of what is protected.
"""

from __future__ import annotations

import os
from pathlib import Path

from .policy import Confinement
from .protect import agentls_paths, layout, real_existing, workspace_paths

# Namespaces: a new user namespace (so even root inside has no power over the host's mounts), PID (nothing
# outlives the command: when it ends, its namespace's init goes and takes every process with it), IPC and
# UTS; the cgroup namespace where the kernel has one.
NAMESPACES = ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")


def bwrap_argv(program: str, confinement: Confinement, cwd: Path, argv: list[str]) -> list[str]:
    args = [program, *NAMESPACES]
    if not confinement.network:
        args.append("--unshare-net")
    # --as-pid-1: the command is the namespace's init, so bwrap returns only once the kernel has killed and
    # reaped everything in it (with bwrap's own init, it returned as the command exited, while the rest
    # was still being killed). No --new-session: the command must stay in the process group that a
    # timeout or an interrupt kills; --die-with-parent alone proved racy. (There is no terminal to protect
    # from TIOCSTI: commands get pipes and a private /dev.)
    args += ["--as-pid-1", "--die-with-parent", "--cap-drop", "ALL",
             "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    args += ["--bind", str(confinement.tmp), "/tmp"] if confinement.tmp is not None else ["--tmpfs", "/tmp"]
    hidden = [Path("/tmp")]
    tmpdir = os.environ.get("TMPDIR", "")
    if tmpdir.startswith("/") and os.path.isdir(tmpdir) and not _under(Path(tmpdir), Path("/tmp")) \
            and not _under(Path(tmpdir), confinement.workspace):
        args += ["--tmpfs", tmpdir]  # a private TMPDIR too, where it is not under /tmp
        hidden.append(Path(tmpdir))
    for path in visible(hidden):
        args += ["--ro-bind-try", str(path), str(path)]
    for path in sorted(confinement.writable, key=lambda p: len(p.parts)):
        args += ["--bind-try", str(path), str(path)]
    workspace = str(confinement.workspace)
    args += ["--bind", workspace, workspace]
    pins, readonly = layout([confinement.workspace, *confinement.writable], protected(confinement))
    for path in pins:
        args += ["--bind", str(path), str(path)]
    for path in readonly:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--chdir", str(cwd), "--", *argv]
    return args


def protected(confinement: Confinement) -> list[Path]:
    """Everything that must stay read-only in this sandbox (``protect.py``)."""
    return [*agentls_paths(), *workspace_paths(confinement.workspace), *confinement.protected]


def visible(hidden: list[Path]) -> list[Path]:
    """What lives under the private ``/tmp`` (or ``$TMPDIR``) but must still be seen: the interpreter, its
    venv, agentls's package and every ``PATH`` entry (a clone or a tool under ``/tmp``)."""
    entries = [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p.startswith("/")]
    venvs = [e.parent for e in entries if (e.parent / "pyvenv.cfg").is_file()]  # bin/ alone hides pyvenv.cfg
    found = real_existing([*entries, *venvs, *agentls_paths()])
    return [p for p in found if any(_under(p, h) and p != h for h in hidden)]


def _under(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents
