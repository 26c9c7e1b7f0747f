"""Where a path argument points: inside the workspace, the whole workspace, outside it, or unknown;
and whether it is a system file, a shell start-up file, credentials or a disk."""

from __future__ import annotations

import os
import posixpath
import re
from typing import Literal

from .state import State
from .words import Arg

Where = Literal["inside", "workspace", "outside", "unknown"]

_ALL = re.compile(r"^[.*?\[\]!]*$")  # a last component that matches everything: *, .*, ./*
_SYSTEM = ("/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys", "/proc",
           "/var/spool/cron", "/var/lib", "/System", "/Library", "/private/etc")
_STARTUP = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
            ".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc", ".mkshrc", ".inputrc",
            ".xinitrc", ".xprofile", ".xsessionrc", ".pam_environment", ".gitconfig", ".config/fish",
            ".config/git", ".config/autostart", ".config/systemd", ".config/environment.d", ".local/bin",
            ".pypirc", ".npmrc", ".docker", ".kube")
_SECRETS = (".ssh", ".gnupg", ".aws", ".netrc", ".config/gh", ".git-credentials")
_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|dm-|md|loop|sr|disk/|mapper/|mem$|kmem$|port$)")


def absolute(text: str, state: State) -> str | None:
    if text.startswith("/"):
        return posixpath.normpath(text)
    if state.cwd is None:
        return None
    return posixpath.normpath(posixpath.join(state.cwd, text or "."))


def _under(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def where(arg: Arg, state: State) -> Where:
    if arg.from_input or arg.procsub:
        return "unknown"
    if arg.dynamic:
        # only the static part is known: judge the directory it names, if any
        directory = arg.text.rpartition("/")[0] + "/" if "/" in arg.text else ""
        if not directory and not arg.text:
            return "unknown"
        path = absolute(directory or ".", state)
        if path is None:
            return "unknown"
        if _under(path, state.root) and path != state.root:
            return "inside"
        return "unknown" if path == state.root else "outside"
    path = absolute(arg.text, state)
    if path is None:
        return "unknown"
    head, last = posixpath.split(path)
    if path == state.root or (head == state.root and _ALL.match(last)):
        return "workspace"
    if _under(path, state.root):
        return "inside"
    return "outside"


def resolved(arg: Arg, state: State) -> str | None:
    """The absolute path of a static argument."""
    if arg.dynamic or arg.procsub or arg.from_input:
        return None
    return absolute(arg.text, state)


def protected(arg: Arg, state: State) -> str | None:
    """What kind of file a write to this argument would change, when it must not change without asking."""
    path = resolved(arg, state)
    if path is None and arg.dynamic and arg.text.startswith("/"):
        path = posixpath.normpath(arg.text)  # /etc/$x is still under /etc
    if path is None:
        return None
    if _DEVICE.match(path):
        return "a disk device"
    if any(_under(path, p) for p in _SYSTEM):
        return "a system file"
    home = state.home
    if path in ("/", home) or (_under(state.root, path) and path != state.root):
        return "a directory that holds the workspace"
    for name in _STARTUP:
        if _under(path, posixpath.join(home, name)):
            return "a shell start-up or tool configuration file"
    return secret(path, state)


def secret(path: str, state: State) -> str | None:
    for name in _SECRETS:
        if _under(path, posixpath.join(state.home, name)):
            return f"credentials (~/{name})"
    if re.search(r"(^|/)\.ssh(/|$)", path) and not _under(path, state.root):
        return "credentials (.ssh)"
    return None


def real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))
