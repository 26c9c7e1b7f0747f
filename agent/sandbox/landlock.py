"""Landlock (Linux 5.13+, no privileges) through ctypes, and the launcher that applies it.

The launcher is this file, imported as a top-level module by ``python -I -S -c BOOT NET PATH... --
ARGV...`` (``wrap.BOOT``; NET is ``net`` or ``nonet``), so it starts on the standard library alone and
from cached bytecode: it drops every capability (root's included),
confines itself (writes only beneath the PATHs; with ``nonet`` no TCP bind or connect, ABI 4+; no
signals to processes outside, ABI 6+), becomes a child subreaper, runs ARGV as its child, and when that
child ends kills whatever the command left behind (daemons that called ``setsid`` included), then exits
with the child's status. Any failure to confine is fatal: the command never runs unconfined from here
(exit 126 with a message on stderr).

Why ctypes and not a PyPI package: the launcher must start in a few milliseconds with ``-I -S`` (no
site-packages), and the binding is three syscalls, two structures and capset.
"""

from __future__ import annotations

import ctypes
import os
import sys

TYPE_CHECKING = False  # not from typing: the launcher imports as little as it can
if TYPE_CHECKING:
    import signal
else:  # the C module: `signal` would import enum, a third of the launcher's start-up
    import _signal as signal

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CAPABILITY_VERSION_3 = 0x20080522

# Filesystem rights (include/uapi/linux/landlock.h).
WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
WRITES_V1 = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
             | MAKE_BLOCK | MAKE_SYM)
FILE_RIGHTS = WRITE_FILE | TRUNCATE  # the only write rights a rule on a non-directory may carry
# Network rights (ABI 4) and scopes (ABI 6).
NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

# Device files every command may write (a rule per file); /dev itself stays read-only.
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm")


class RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


_loaded: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    if not _loaded:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        libc.prctl.restype = ctypes.c_int
        _loaded.append(libc)
    return _loaded[0]


def _fail(what: str) -> OSError:
    errno = ctypes.get_errno()
    return OSError(errno, f"{what}: {os.strerror(errno)}")


def abi_version() -> int:
    """The kernel's Landlock ABI (0 when Landlock is missing or disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        found = int(_libc().syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                                    ctypes.c_uint32(CREATE_RULESET_VERSION)))
    except (OSError, AttributeError):
        return 0
    return max(found, 0)


def handled_rights(abi: int) -> int:
    return WRITES_V1 | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0)


def restrict_self(writable: list[str], network: bool) -> int:
    """Confine this process and its future children: writes only beneath ``writable`` (and the usual
    device files); without ``network``, no TCP bind or connect (ABI 4+). Returns the ABI used."""
    abi = abi_version()
    if abi < 1:
        raise OSError(38, "Landlock is not supported by this kernel or is disabled")
    libc = _libc()
    fs = handled_rights(abi)
    attr = RulesetAttr(fs, 0 if network or abi < 4 else NET_BIND_TCP | NET_CONNECT_TCP,
                       0 if abi < 6 else SCOPE_SIGNAL | (0 if network else SCOPE_ABSTRACT_UNIX_SOCKET))
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = int(libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                               ctypes.c_uint32(0)))
    if ruleset < 0:
        raise _fail("landlock_create_ruleset")
    try:
        for path in [*writable, *DEVICE_FILES]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a path that does not exist needs no rule
            try:
                is_dir = (os.fstat(fd).st_mode & 0o170000) == 0o040000  # stat.S_ISDIR without importing stat
                allowed = fs if is_dir else fs & FILE_RIGHTS
                rule = PathBeneathAttr(allowed, fd)
                if libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset),
                                ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    raise _fail(f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _fail("prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def drop_capabilities() -> None:
    """Root keeps every capability under Landlock (it could load modules, reboot, change the firewall):
    empty the bounding set, the ambient set and the process's own sets, so nothing it runs, root or
    set-uid, gets one back. Nothing to do for a process without capabilities."""
    libc = _libc()
    header, data = CapHeader(CAPABILITY_VERSION_3, 0), (CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise _fail("capget")
    if not any(d.effective or d.permitted or d.inheritable for d in data):
        return
    try:
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            last = int(fh.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: no such cap
            raise _fail(f"prctl(PR_CAPBSET_DROP, {cap})")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header, data = CapHeader(CAPABILITY_VERSION_3, 0), (CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise _fail("capset")


def _children() -> list[int]:
    """This process's children (the orphans it adopted as a subreaper included)."""
    found: list[int] = []
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children") as fh:
                found += [int(p) for p in fh.read().split()]
    except OSError:
        me = os.getpid()
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as fh:
                        if int(fh.read().rsplit(")", 1)[1].split()[1]) == me:
                            found.append(int(entry))
                except (OSError, IndexError, ValueError):
                    pass
    return found


def _reap_rest() -> None:
    """Kill and reap everything left: killing an adopted child hands us its own children, so repeat."""
    while True:
        for pid in _children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.wait()
        except ChildProcessError:
            return


def main(argv: list[str]) -> int:
    try:
        split = argv.index("--")
        net, writable, command = argv[0], argv[1:split], argv[split + 1:]
        if net not in ("net", "nonet") or not command:
            raise ValueError
    except ValueError:
        print("usage: python -I -S -c BOOT net|nonet PATH... -- ARGV...", file=sys.stderr)
        return 2
    try:
        drop_capabilities()
        restrict_self(writable, network=net == "net")
    except OSError as exc:
        print(f"agentls sandbox: Landlock could not be applied ({exc}); the command did not run", file=sys.stderr)
        return 126
    _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:  # posix_spawn (vfork-like) rather than fork+exec: a few milliseconds less per command
        pid = os.posix_spawn(command[0], command, os.environ,
                             setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))  # Python ignores these; exec keeps that
    except OSError as exc:
        print(f"agentls sandbox: cannot run {command[0]}: {exc}", file=sys.stderr)
        return 127
    # The signals a process group gets reach the command too: outlive them, to clean up after it.
    for outlived in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(outlived, lambda *_: None)
    while True:
        try:
            done, status = os.wait()
        except InterruptedError:
            continue
        if done == pid:
            break
    _reap_rest()
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    return os.waitstatus_to_exitcode(status) if not os.WIFSIGNALED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
