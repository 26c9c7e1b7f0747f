"""What each program does that is clearly dangerous, judged on its words once the wrappers are gone."""

from __future__ import annotations

import re
from collections.abc import Callable

from .targets import Where, protected, resolved, secret, where
from .state import Dangerous, State
from .words import Arg
from .wrappers import name_of

Rule = Callable[[list[Arg], State], None]
CheckWords = Callable[[list[Arg], State], None]

_DELETES = {"outside": "it deletes {what} outside the workspace", "unknown": "it deletes a path computed at run "
            "time ({text}…)", "workspace": "it deletes the whole workspace"}


def _split(args: list[Arg]) -> tuple[set[str], list[Arg]]:
    """Short flags (letters) and long options before `--`; the other words."""
    flags: set[str] = set()
    operands: list[Arg] = []
    ended = False
    for arg in args:
        text = arg.static
        if not ended and text is not None and text.startswith("-") and len(text) > 1:
            if text == "--":
                ended = True
            elif text.startswith("--"):
                flags.add(text.split("=", 1)[0])
            else:
                flags.update(text[1:])
            continue
        operands.append(arg)
    return flags, operands


def _deleting(target: Arg, state: State, recursive: bool, what: str = "recursively") -> None:
    kind: Where = where(target, state)
    if kind == "workspace" or (recursive and kind in ("outside", "unknown")):
        raise Dangerous(_DELETES[kind].format(what=what, text=target.text))
    danger = protected(target, state)
    if danger:
        raise Dangerous(f"it deletes {danger}")


def rm(args: list[Arg], state: State) -> None:
    flags, targets = _split(args)
    if "--no-preserve-root" in flags:
        raise Dangerous("it deletes with --no-preserve-root")
    forced = bool(flags & {"r", "R", "f", "--recursive", "--force"})
    for target in targets:
        _deleting(target, state, forced, "recursively or by force" if forced else "")


def shred(args: list[Arg], state: State) -> None:
    _, targets = _split(args)
    for target in targets:
        _deleting(target, state, True, "files")


def rsync(args: list[Arg], state: State) -> None:
    flags, operands = _split(args)
    if operands:
        _writing(operands[-1], state)
        if any(f.startswith("--delete") or f == "--remove-source-files" for f in flags):
            _deleting(operands[-1], state, True, "with rsync --delete")


def _writing(target: Arg, state: State) -> None:
    danger = protected(target, state)
    if danger:
        raise Dangerous(f"it writes to {danger} ({target.text or 'computed at run time'})")


def copy(args: list[Arg], state: State) -> None:
    """cp, install, ln: the last operand (or -t DIR) is written."""
    _, operands = _split(args)
    targets = [a for i, a in enumerate(args) if i and args[i - 1].static in ("-t", "--target-directory")]
    targets += [Arg(a.text.split("=", 1)[1]) for a in args if (a.static or "").startswith("--target-directory=")]
    if len(operands) > 1:
        targets.append(operands[-1])
    for target in targets:
        _writing(target, state)


def mv(args: list[Arg], state: State) -> None:
    _, operands = _split(args)
    copy(args, state)
    for source in operands[:-1]:
        _deleting(source, state, True, "by moving it")


def tee(args: list[Arg], state: State) -> None:
    for target in _split(args)[1]:
        _writing(target, state)


def in_place(args: list[Arg], state: State) -> None:
    """sed -i / perl -i: the files after the script are written."""
    flags, operands = _split(args)
    if not any(f.startswith("i") or f in ("--in-place",) for f in flags) and "i" not in flags:
        return
    for target in operands:
        _writing(target, state)


def truncate(args: list[Arg], state: State) -> None:
    for target in _split(args)[1]:
        if target.static not in (None,) and not re.fullmatch(r"[-+<>/%]?\d+[KMGTkmgt]?", target.text):
            _writing(target, state)


def dd(args: list[Arg], state: State) -> None:
    for arg in args:
        if arg.text.startswith("of="):
            target = arg.text[3:]
            if target == "~" or target.startswith("~/"):  # bash expands it in a word like an assignment
                target = state.home + target[1:]
            _writing(Arg(target, arg.dynamic), state)


def find(args: list[Arg], state: State, check_words: CheckWords) -> None:
    roots: list[Arg] = []
    i = 0
    while i < len(args) and not (args[i].static or "x").startswith(("-", "(", "!")):
        roots.append(args[i])
        i += 1
    roots = roots or [Arg(".")]
    expression = [a.text for a in args[i:]]
    if "-delete" in expression:
        tests = [w for w in expression if w.startswith("-") and w not in ("-delete", "-depth", "-mindepth",
                                                                           "-maxdepth", "-xdev", "-mount")]
        for root in roots:
            kind = where(root, state)
            if kind in ("outside", "unknown") or (kind == "workspace" and not tests):
                raise Dangerous(_DELETES[kind].format(what="with find -delete", text=root.text))
    for k, word in enumerate(expression):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            command: list[Arg] = []
            for arg in args[i + k + 1:]:
                if arg.static in (";", "+"):
                    break
                command.append(arg)
            program = name_of(command[0]) if command else None
            for root in roots:
                kind = where(root, state)
                if program in ("rm", "unlink", "shred", "mv") and kind in ("outside", "unknown"):
                    raise Dangerous(_DELETES[kind].format(what=f"with find -exec {program}", text=root.text))
                found = Arg(root.text.rstrip("/") + "/found", root.dynamic, root.procsub, root.from_input)
                check_words([found if a.static == "{}" else
                             Arg(a.text.replace("{}", found.text), a.dynamic) for a in command], state)
        if word in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + k + 1 < len(args):
            _writing(args[i + k + 1], state)


def permissions(args: list[Arg], state: State) -> None:
    """chmod, chown, chgrp, setfacl."""
    flags, operands = _split(args)
    recursive = bool(flags & {"R", "--recursive"})
    reference = any(f == "--reference" for f in flags)
    for target in operands[0 if reference else 1:]:
        kind = where(target, state)
        if recursive and kind in ("outside", "unknown"):
            raise Dangerous("it changes permissions or owners recursively outside the workspace")
        danger = protected(target, state)
        if danger:
            raise Dangerous(f"it changes the permissions or owner of {danger}")


def disks(args: list[Arg], state: State) -> None:
    raise Dangerous("it formats or wipes a disk")


def partitions(args: list[Arg], state: State) -> None:
    if not any(a.static in ("-l", "--list", "print", "-p", "--print") for a in args):
        raise Dangerous("it changes a disk's partitions")


def power(args: list[Arg], state: State) -> None:
    raise Dangerous("it shuts down or restarts the machine")


def init(args: list[Arg], state: State) -> None:
    if any(a.static in ("0", "6", "1", "s", "S") for a in args):
        raise Dangerous("it shuts down or restarts the machine")


def systemctl(args: list[Arg], state: State) -> None:
    if any(a.static in ("poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "soft-reboot")
           for a in args):
        raise Dangerous("it shuts down or restarts the machine")


def kill(args: list[Arg], state: State) -> None:
    _, operands = _split(args)
    if any(a.static in ("-1", "1") for a in operands) or any(a.static == "-1" for a in args[1:]):
        raise Dangerous("it kills every process (or init)")


def killall5(args: list[Arg], state: State) -> None:
    raise Dangerous("it kills every process")


def crontab(args: list[Arg], state: State) -> None:
    if not any(a.static in ("-l", "--list") for a in args):
        raise Dangerous("it changes the crontab")


def system(args: list[Arg], state: State) -> None:
    """Accounts, the firewall, kernel modules and settings, mounts: the machine's own configuration."""
    listing = {"-L", "--list", "-l", "list", "show", "status", "-S", "-n", "-a", "--all"}
    if args and not any(a.static in listing for a in args[:2]):
        raise Dangerous("it changes the machine's configuration (accounts, firewall, kernel, mounts)")


def sysctl(args: list[Arg], state: State) -> None:
    if any(a.static in ("-w", "--write", "-p", "--load") or "=" in a.text for a in args):
        raise Dangerous("it changes kernel settings")


_GLOBAL_WITH_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}


_RUNS_CONFIG = re.compile(r"(sshcommand|pager|editor|askpass|fsmonitor|hookspath|textconv|command|program|"
                          r"\.cmd|helper)$", re.I)


def git(args: list[Arg], state: State, script: Callable[[str, State], None] | None = None) -> None:
    i = 0
    while i < len(args) and (args[i].static or "").startswith("-"):
        if args[i].text == "-c" and i + 1 < len(args):  # git -c core.pager='…' runs that as a command
            key, _, value = args[i + 1].text.partition("=")
            if args[i + 1].dynamic:
                raise Dangerous("it sets a git option computed at run time")
            if script is not None and (_RUNS_CONFIG.search(key) or value.startswith("!")):
                script(value.removeprefix("!"), state)
        i += 1 + (args[i].text in _GLOBAL_WITH_VALUE)
    if i >= len(args) or args[i].static != "push":
        return
    for arg in args[i + 1:]:
        text = arg.text
        if text in ("--force", "--force-with-lease", "--mirror", "--delete", "--prune") or \
                text.startswith(("--force-with-lease=", "--force-if-includes")) or \
                (re.fullmatch(r"-[a-zA-Z]+", text) and ("f" in text or "d" in text)) or \
                (text.startswith("+") and len(text) > 1) or (text.startswith(":") and len(text) > 1):
            raise Dangerous("it force-pushes with git (or deletes remote branches)")


def credentials(args: list[Arg], state: State) -> None:
    """Any command that names credentials (~/.ssh and the like), reading or writing."""
    for arg in args:
        texts = [arg.text] + ([arg.text.split("=", 1)[1]] if "=" in arg.text else [])
        for text in texts:
            path = resolved(Arg(text, arg.dynamic), state) if text.startswith(("/", "~")) or "/" in text else None
            if path is None and text.startswith("/"):
                path = text
            found = secret(path, state) if path else None
            if found:
                raise Dangerous(f"it touches {found}")


RULES: dict[str, Rule] = {
    "rm": rm, "unlink": shred, "shred": shred, "srm": shred, "rsync": rsync, "cp": copy, "install": copy,
    "ln": copy, "mv": mv, "tee": tee, "sed": in_place, "gsed": in_place, "truncate": truncate, "dd": dd,
    "chmod": permissions, "chown": permissions, "chgrp": permissions, "setfacl": permissions,
    "mkswap": disks, "mke2fs": disks, "wipefs": disks, "blkdiscard": disks, "fdisk": partitions,
    "sfdisk": partitions, "parted": partitions, "gdisk": partitions, "sgdisk": partitions, "cfdisk": partitions,
    "shutdown": power, "reboot": power, "halt": power, "poweroff": power, "kexec": power, "init": init,
    "telinit": init, "systemctl": systemctl, "kill": kill, "pkill": kill, "killall5": killall5,
    "crontab": crontab, "rimraf": shred, "del": shred, "useradd": system, "userdel": system,
    "usermod": system, "groupdel": system, "chpasswd": system, "passwd": system, "visudo": system,
    "iptables": system, "ip6tables": system, "nft": system, "ufw": system, "modprobe": system, "rmmod": system,
    "insmod": system, "mount": system, "umount": system, "swapoff": system, "sysctl": sysctl,
}


def rule_for(arg: Arg) -> Rule | None:
    name = name_of(arg)
    if name is None:
        return None
    if name.startswith("mkfs"):
        return disks
    return RULES.get(name)
