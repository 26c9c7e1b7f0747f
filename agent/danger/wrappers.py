"""Words that run the rest of their command line (sudo, env, nice, timeout, xargs…): looked through, with
their options and the options' arguments, to find the program that really runs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .words import Arg


@dataclass(frozen=True)
class Wrapper:
    takes_value: frozenset[str] = frozenset()  # short options followed by a value: -u USER
    long_values: frozenset[str] = frozenset()  # long options followed by a value when not --opt=value
    positionals: int = 0  # words before the command: timeout's DURATION, chroot's NEWROOT
    no_command: frozenset[str] = frozenset()  # options that mean nothing is run: command -v
    assignments: bool = False  # VAR=value words may come before the command (env, sudo)


def _w(values: str = "", longs: tuple[str, ...] = (), positionals: int = 0, no_command: str = "",
       assignments: bool = False) -> Wrapper:
    return Wrapper(frozenset(values), frozenset(longs), positionals, frozenset(no_command), assignments)


WRAPPERS: dict[str, Wrapper] = {
    "sudo": _w("ugCDhpRrtTU", ("--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--chroot",
                               "--role", "--type", "--command-timeout", "--other-user"), no_command="lVvkK",
               assignments=True),
    "doas": _w("uC"), "pkexec": _w("", ("--user",)), "runuser": _w("ugG", ("--user", "--group")),
    "env": _w("uCSP", ("--unset", "--chdir", "--split-string"), assignments=True),
    "nice": _w("n", ("--adjustment",)), "ionice": _w("cnp", ("--class", "--classdata", "--pid"), no_command="p"),
    "timeout": _w("sk", ("--signal", "--kill-after"), positionals=1),
    "nohup": _w(), "setsid": _w(), "time": _w("fo", ("--format", "--output")), "command": _w(no_command="vV"),
    "builtin": _w(), "exec": _w("a"), "stdbuf": _w("ioe", ("--input", "--output", "--error")),
    "chroot": _w("", ("--userspec", "--groups"), positionals=1), "coproc": _w(), "nocorrect": _w(),
    "noglob": _w(), "busybox": _w(), "toybox": _w(), "unbuffer": _w(), "fakeroot": _w(),
    "flock": _w("wEc", ("--timeout", "--conflict-exit-code", "--command"), positionals=1),
    "taskset": _w("", (), positionals=1), "chrt": _w("", (), positionals=1), "numactl": _w("CNmip"),
    "watch": _w("ndq", ("--interval", "--differences", "--equexit")), "catchsegv": _w(),
    "xargs": _w("adEeIiLlnPs", ("--arg-file", "--delimiter", "--eof", "--replace", "--max-lines", "--max-args",
                                "--max-procs", "--max-chars", "--process-slot-var")),
    "nsenter": _w("tSGn", ("--target",)), "unshare": _w(), "strace": _w("eoOpsuP"), "ltrace": _w("eonpsu"),
    "systemd-run": _w("pEu", ("--property", "--setenv", "--unit", "--uid", "--gid")), "firejail": _w(),
    "npx": _w("p", ("--package", "-c", "--call")), "bunx": _w("p", ("--package",)), "uvx": _w("p", ("--from",
                                                                                                   "--with")),
    "pnpx": _w(), "dlx": _w(), "pipx": _w(), "run": _w(), "proxychains": _w("f"), "proxychains4": _w("f"), "torsocks": _w(), "faketime": _w("f", (), positionals=1),
}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class Unwrapped:
    words: list[Arg]
    xargs: bool = False  # the command gets more arguments from its input
    split_string: str | None = None  # env -S "…": a command line of its own
    runs: bool = True  # False for `command -v rm`, `sudo -l`
    joined: bool = False  # watch, su -c: the words are joined into a shell line


def name_of(arg: Arg) -> str | None:
    if arg.dynamic:
        return None
    return arg.text.rsplit("/", 1)[-1]


def unwrap(words: list[Arg]) -> Unwrapped:
    result = Unwrapped(words)
    while result.words:
        name = name_of(result.words[0])
        spec = WRAPPERS.get(name or "")
        if spec is None:
            break
        rest = result.words[1:]
        i = 0
        left = spec.positionals
        while i < len(rest):
            word = rest[i].static
            if word is None:
                break
            if word == "--":
                i += 1
                break
            if spec.assignments and _ASSIGNMENT.match(word):
                i += 1
                continue
            if word.startswith("--") and len(word) > 2:
                option = word.split("=", 1)[0]
                if option in ("--split-string",) and name == "env":
                    result.split_string = word.split("=", 1)[1] if "=" in word else \
                        (rest[i + 1].static if i + 1 < len(rest) else None)
                i += 1 + (option in spec.long_values and "=" not in word)
                continue
            if word.startswith("-") and len(word) > 1:
                flags = word[1:]
                if set(flags) & spec.no_command:
                    result.runs = False
                    return result
                i += 1
                for k, flag in enumerate(flags):
                    if flag in spec.takes_value:
                        if name == "env" and flag == "S":
                            value = flags[k + 1:] or (rest[i].static if i < len(rest) else None)
                            result.split_string = value
                        if k == len(flags) - 1:
                            i += 1  # the value is the next word
                        break
                continue
            if word == "-" and name == "env":
                i += 1
                continue
            if left:
                left -= 1
                i += 1
                continue
            break
        if name == "xargs":
            result.xargs = True
        if name == "watch":
            result.joined = True
        if name == "env" and result.split_string is not None:
            return result
        if name in ("chroot", "xargs") and i >= len(rest):
            result.words = [Arg("sh" if name == "chroot" else "echo")]
            return result
        result.words = rest[i:]
    return result
