"""The bubblewrap command line: the root read-only, the workspace and the extra paths read-write, a
private ``/tmp`` (the session's own folder: files live from one command to the next, and nobody else
sees them), a minimal ``/dev``, new PID/IPC/UTS/user namespaces, no capabilities, no network
unless allowed, and the whole sandbox killed with its parent. The repository's hooks and config stay
read-only (git would run what they name later, unconfined).

Mount order matters: later mounts hide earlier ones, so ``/tmp`` comes before the
writable binds, which go parents first, and the workspace comes last (it may itself be under ``/tmp``).
"""

from __future__ import annotations

import os
from pathlib import Path

from .policy import Confinement

# Namespaces: a new user namespace (so even root inside has no power over the host's mounts), PID (nothing
# outlives the command: when it ends, its namespace's init goes and takes every process with it), IPC and
# UTS; the cgroup namespace where the kernel has one.
# Inside the workspace but read-only: what git runs later, outside any sandbox (hooks; core.hooksPath,
# core.fsmonitor and aliases in the config). Commits, branches and the rest of .git stay writable.
PROTECTED = (".git/hooks", ".git/config")
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
    tmpdir = os.environ.get("TMPDIR", "")
    if tmpdir.startswith("/") and os.path.isdir(tmpdir) and not _under(Path(tmpdir), Path("/tmp")) \
            and not _under(Path(tmpdir), confinement.workspace):
        args += ["--tmpfs", tmpdir]  # a private TMPDIR too, where it is not under /tmp
    for path in sorted(confinement.writable, key=lambda p: len(p.parts)):
        args += ["--bind-try", str(path), str(path)]
    workspace = str(confinement.workspace)
    args += ["--bind", workspace, workspace]
    for rel in PROTECTED:
        protected = str(confinement.workspace / rel)
        args += ["--ro-bind-try", protected, protected]
    args += ["--chdir", str(cwd), "--", *argv]
    return args


def _under(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents
