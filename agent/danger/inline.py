"""Code given on the command line to an interpreter (``python -c``, ``perl -e``, ``node -e``, awk):
not parsed as its language, but searched for what makes it dangerous: shell commands in its strings,
deletions aimed at the home directory or outside the workspace, decoded code run, fork loops."""

from __future__ import annotations

import re
from collections.abc import Callable

from .targets import protected, where
from .state import Dangerous, State
from .words import Arg

_STRING = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'|`((?:[^`\\]|\\.)*)`", re.S)
_DELETE = re.compile(r"rmtree|unlink|\bremove\b|removedirs|rmdir|rm_rf|rm_r\b|rmSync|rimraf|\bfs\.rm\b|"
                     r"\.rm\(|File::Path|remove_tree|FileUtils\.rm|delete_tree|\brmdirSync|\bos\.remove", re.I)
_HOME = re.compile(r"expanduser|Path\.home|homedir|\bHOME\b|getpwuid|USERPROFILE|Dir\.home|(^|[\"'`(\s])~")
_RUNS = re.compile(r"\bexec\b|\beval\b|\bsystem\b|\bpopen\b|subprocess|child_process|\bspawn|\bqx\b|Function\(")
_DECODE = re.compile(r"b64decode|base64|fromCharCode|\batob\b|unhexlify|fromhex|codecs\.decode|decompress|"
                     r"marshal\.loads|pack\(\s*['\"]H|\\x[0-9a-fA-F]{2}.*\\x[0-9a-fA-F]{2}|rot13|\[::-1\]", re.S)
_FORK = re.compile(r"fork.*\b(while|for|loop)\b|\b(while|for|loop)\b.*fork", re.S)
_WRITES = re.compile(r"""['"][wax]b?\+?['"]|write|append|>|copy|move|rename|symlink|chmod|chown""", re.I)

ScriptCheck = Callable[[str, State], None]


def check_code(code: str, state: State, script: ScriptCheck) -> None:
    literals = [next(g for g in m.groups() if g is not None) for m in _STRING.finditer(code)]
    for literal in literals:  # a string that is a dangerous shell command, run through system() and co.
        if len(literal) > 1 and " " in literal.strip():
            try:
                script(literal, state)
            except Dangerous as exc:
                if "could not be parsed" not in exc.reason:
                    raise Dangerous(f"its inline code holds a dangerous command: {exc.reason}") from None
    paths = [Arg(s) for s in literals if s.startswith(("/", "~", "..")) or s in (".", "*")]
    if _DELETE.search(code):
        if _HOME.search(code):
            raise Dangerous("its inline code deletes files in the home directory")
        for path in paths:
            if where(path, state) in ("outside", "workspace"):
                raise Dangerous(f"its inline code deletes files outside the workspace ({path.text})")
        if not literals:
            raise Dangerous("its inline code deletes files it names at run time")
    if _DECODE.search(code) and _RUNS.search(code):
        raise Dangerous("its inline code runs code it decodes first")
    if _FORK.search(code):
        raise Dangerous("its inline code forks in a loop (a fork bomb)")
    if _WRITES.search(code):
        for path in paths:
            found = protected(path, state)
            if found:
                raise Dangerous(f"its inline code writes to {found} ({path.text})")


_PYTHON = re.compile(r"^(python[0-9.]*|pypy[0-9.]*)$")
_PERLISH = re.compile(r"^(perl[0-9.]*|ruby[0-9.]*|lua[0-9.]*|luajit|osascript)$")
_NODE = re.compile(r"^(node|nodejs|bun)$")
_AWK = re.compile(r"^(awk|gawk|mawk|nawk|busybox-awk)$")
_PHP = re.compile(r"^php[0-9.]*$")


_VALUED = {"python": ("-W", "-X", "-Q"), "node": ("-r", "--require", "--import", "--loader", "-C", "--conditions",
                                                  "--input-type"), "perl": ("-I", "-M", "-m"),
           "other": ("-r", "-I", "-C", "-l")}


def _family(name: str) -> str:
    if _PYTHON.match(name):
        return "python"
    if _NODE.match(name):
        return "node"
    if _PHP.match(name):
        return "php"
    return "perl" if name.startswith("perl") else "other"


def interpreter(name: str) -> bool:
    return bool(_PYTHON.match(name) or _PERLISH.match(name) or _NODE.match(name) or _AWK.match(name)
                or _PHP.match(name) or name in ("deno", "Rscript", "tclsh", "wish"))


def inline_code(name: str, args: list[Arg]) -> tuple[list[Arg], Arg | None]:
    """The code words an interpreter gets on its command line; else the script it runs (``-`` for its
    input, None for none)."""
    if _AWK.match(name):
        i = 0
        while i < len(args) and (args[i].static or "").startswith("-"):
            if args[i].text in ("-f", "--file") or args[i].text.startswith("-f"):
                return [], args[i + 1] if args[i].text in ("-f", "--file") and i + 1 < len(args) else None
            i += 1 + (args[i].text in ("-F", "-v", "--assign", "--field-separator"))
        return args[i:i + 1], None
    if name == "deno":
        return (args[1:2] if args and args[0].static == "eval" else []), None
    code_flags = {"c"} if _PYTHON.match(name) else {"r"} if _PHP.match(name) else {"e", "E", "p"}
    codes: list[Arg] = []
    i = 0
    while i < len(args):
        text = args[i].static
        if text is None or not text.startswith("-") or text == "-":
            break
        if text in ("--eval", "--print"):
            codes.extend(args[i + 1:i + 2])
            i += 2
            continue
        if _PYTHON.match(name) and text in ("-m",):
            return codes, None
        if text in _VALUED.get(_family(name), ()):  # an option and its value: python -W ignore -c …
            i += 2
            continue
        letters = text[1:] if not text.startswith("--") else ""
        if _PERLISH.match(name):  # -MFile::Path=rmtree, -I dir, -0777: a value, not flags
            letters = re.match(r"[acdlnpsStTuUvwWXeE]*", letters).group(0)  # type: ignore[union-attr]
        hit = next((k for k, ch in enumerate(letters) if ch in code_flags), None)
        if hit is not None:
            attached = letters[hit + 1:]
            if attached and not _PERLISH.match(name):
                codes.append(Arg(attached))
                i += 1
            else:
                codes.extend(args[i + 1:i + 2])
                i += 2
            if _PYTHON.match(name):
                return codes, None
            continue
        i += 1
    if codes:
        return codes, None
    rest = args[i:]
    return [], rest[0] if rest else Arg("-")
