"""Simple commands once their words are known: wrappers looked through, then shells, interpreters,
``eval``, ``source``, ``cd`` and the program rules; and what each writes to its output, for the next
command of a pipeline."""

from __future__ import annotations

import re

from . import rules
from .inline import check_code, inline_code, interpreter
from .targets import absolute
from .state import Dangerous, Source, State
from .words import Arg
from .wrappers import name_of, unwrap

_SHELL = re.compile(r"^(sh|bash|dash|zsh|ksh|ksh93|mksh|pdksh|ash|fish|tcsh|csh|yash|posh|rbash|oksh)$")
_DOWNLOAD = frozenset({"curl", "wget", "fetch", "aria2c", "nc", "ncat", "netcat", "socat", "http", "https",
                       "lynx", "links", "w3m", "ftp", "tftp", "lwp-request", "GET"})
_DECODE = frozenset({"base64", "base32", "basenc", "xxd", "openssl", "gunzip", "gzip", "zcat", "bzip2", "bzcat",
                     "xz", "xzcat", "unxz", "zstd", "zstdcat", "rev", "tr", "uudecode", "tac", "sed", "cut"})


def _printf(form: str, args: list[str]) -> str:
    """printf's output, near enough to read it as a script: %s, %b, %d and %c take the arguments."""
    out: list[str] = []
    rest = list(args)
    while True:
        out.append(re.sub(r"%%|%[-+ #0-9.]*[sbdciouxXfeEgGq]",
                          lambda m: "%" if m.group(0) == "%%" else (rest.pop(0) if rest else ""), form))
        if not rest or len(out) > 64:
            break
    return "".join(out).replace("\\n", "\n").replace("\\t", "\t")


class Programs:
    def script(self, text: str, st: State, same_shell: bool = False) -> None:
        raise NotImplementedError

    def parse(self, text: str, st: State) -> None:
        """Check ``text`` as shell code in ``st`` itself (an interpreter's string literals)."""
        raise NotImplementedError

    def words(self, words: list[Arg], st: State) -> Source:
        unwrapped = unwrap(words)
        if not unwrapped.runs:
            return Source()
        if unwrapped.split_string is not None:
            self.script(unwrapped.split_string, st)
            return Source()
        words = unwrapped.words
        if not words:
            return Source()
        if unwrapped.joined:
            self.code(words, st, "watch")
            return Source()
        if unwrapped.xargs:
            stdin = st.stdin
            appended = [Arg(r.rstrip("/") + "/found") for r in stdin.roots] if stdin and stdin.roots else \
                [Arg("", dynamic=True, from_input=True)]
            if any(a.static in ("{}",) for a in words):
                words = [x for a in words for x in (appended if a.static == "{}" else [a])]
            else:
                words = words + appended
        rules.credentials(words, st)
        name = name_of(words[0])
        written = self.script_file(words[0], st)
        if written is not None:
            self.script(written, st)
        if name is None:
            return self.unknown_program(words, st)
        args = words[1:]
        if name in st.functions:
            return Source()
        if name == "eval":
            self.code(args, st, "eval", same_shell=True)
        elif name in (".", "source"):
            self.source(args, st)
        elif _SHELL.match(name):
            self.shell(args, st)
        elif interpreter(name):
            self.interpreter(name, args, st)
        elif name in ("cd", "pushd", "chdir"):
            targets = [a for a in args if not (a.static or "x").startswith("-") or a.static == "-"]
            if not targets:
                st.cwd = st.home if name != "pushd" else st.cwd
            else:
                target = targets[0]
                st.cwd = None if target.dynamic or target.text == "-" else absolute(target.text, st)
        elif name == "popd":
            st.cwd = None
        elif name == "alias":
            for arg in args:
                if "=" in arg.text and not arg.dynamic:
                    alias, value = arg.text.split("=", 1)
                    st.aliases[alias] = value
        elif name in ("read", "mapfile", "readarray", "getopts"):
            for arg in args:
                if not arg.dynamic and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", arg.text):
                    st.variables[arg.text] = None
        elif name == "su":
            for i, arg in enumerate(args[:-1]):
                if arg.static in ("-c", "--command"):
                    self.code(args[i + 1:i + 2], st, "su -c")
        elif name == "trap" and args and args[0].static not in ("-l", "-p"):
            self.code(args[:1], st, "trap")  # run later, on a signal or at exit
        elif name in ("at", "batch"):
            self.program(Arg("-"), st, name, None)  # reads its commands from its input
        elif name in ("ssh", "slogin"):
            self.remote(args, st)
        elif name == "find":
            rules.find(args, st, self.check_words)
        elif name == "git":
            rules.git(args, st, lambda text, state: self.script(text, state))
        else:
            rule = rules.rule_for(words[0])
            if rule is not None:
                rule(args, st)
        return self.output(name, args, st)

    def check_words(self, words: list[Arg], st: State) -> None:
        self.words(words, st.fork())

    def output(self, name: str, args: list[Arg], st: State) -> Source:
        """What this command writes to its output, as far as the next command in a pipeline cares."""
        stdin = st.stdin
        if name in ("echo", "printf"):
            texts = [a for a in args if not (name == "echo" and a.static in ("-n", "-e", "-E", "-ne", "-en"))]
            if any(a.dynamic for a in texts):
                return Source()
            if name == "printf" and texts:
                return Source(text=_printf(texts[0].text, [a.text for a in texts[1:]]))
            return Source(text=" ".join(a.text for a in texts).replace("\\n", "\n"))
        if name == "cat" and not [a for a in args if not a.text.startswith("-") or a.text == "-"]:
            return stdin or Source()
        if name in _DOWNLOAD:
            return Source(download=True)
        if name in _DECODE:
            return Source(download=bool(stdin and stdin.download))
        if name in ("find", "ls", "git"):
            roots = [a for a in args if not a.text.startswith("-")]
            if name == "git":
                return Source(roots=(".",)) if args and args[0].static == "ls-files" else Source()
            if name == "find":
                roots = roots[:1] if roots and not roots[0].text.startswith(("(", "!")) else []
            if any(a.dynamic for a in roots):
                return Source()
            return Source(roots=tuple(absolute(a.text, st) or "" for a in roots) or (st.cwd or "",)) \
                if st.cwd or all(a.text.startswith("/") for a in roots) and roots else Source()
        return Source()

    def unknown_program(self, words: list[Arg], st: State) -> Source:
        if st.ifs_changed:
            raise Dangerous("it runs a command split with a changed IFS")
        for candidate in ("rm", "sh"):
            try:
                self.words([Arg(candidate)] + words[1:], st.fork())
            except Dangerous as exc:
                raise Dangerous(f"it runs a program named at run time with arguments that would be dangerous "
                                f"for {candidate} ({exc.reason})") from None
        return Source()

    def code(self, args: list[Arg], st: State, what: str, same_shell: bool = False) -> None:
        if any(a.dynamic for a in args):
            raise Dangerous(f"it runs code computed at run time ({what})")
        if args:
            self.script(" ".join(a.text for a in args), st, same_shell)

    def remote(self, args: list[Arg], st: State) -> None:
        """``ssh HOST COMMAND…``: the command runs in a shell over there, which may be this machine."""
        i = 0
        while i < len(args) and (args[i].static or "").startswith("-"):
            i += 1 + (args[i].text[-1:] in "bcDEeFIiJLlmOopQRSWw" and len(args[i].text) == 2)
        command = args[i + 1:]
        if command:
            self.code(command, st, "ssh")

    def source(self, args: list[Arg], st: State) -> None:
        if not args:
            return
        script = args[0]
        if script.procsub or script.static in ("/dev/stdin", "-") or \
                (script.static or "").startswith(("/dev/fd/", "/proc/self/fd/")):
            raise Dangerous("it runs the output of another command as a script")
        if script.dynamic and not script.text:
            raise Dangerous("it sources a script whose name is computed at run time")

    def shell(self, args: list[Arg], st: State) -> None:
        i = 0
        command = reads_input = False
        while i < len(args):
            text = args[i].static
            if text is None or not text.startswith(("-", "+")) or text in ("-", "+"):
                break
            i += 1
            if text == "--":
                break
            if text in ("--rcfile", "--init-file", "-o", "+o", "-O", "+O"):
                i += 1
            elif not text.startswith("--") and text.startswith("-"):
                command = command or "c" in text[1:]
                reads_input = reads_input or "s" in text[1:]
        operands = args[i:]
        if command:
            self.code(operands[:1], st, "sh -c")
            return
        script = operands[0] if operands and not reads_input else Arg("-")
        self.program(script, st, "a shell", None)

    def interpreter(self, name: str, args: list[Arg], st: State) -> None:
        codes, script = inline_code(name, args)
        for code in codes:
            if code.dynamic:
                raise Dangerous(f"it runs {name} code computed at run time")
            check_code(code.text, st, self.parse)
        if script is not None:
            self.program(script, st, name, lambda text: check_code(text, st, self.parse))

    def script_file(self, arg: Arg, st: State) -> str | None:
        """The text of a script this command line wrote earlier (``echo … > x.sh; sh x.sh``)."""
        path = absolute(arg.text, st) if not arg.dynamic and "/" in arg.text else None
        if path is None or path not in st.files:
            return None
        text = st.files[path]
        if text is None:
            raise Dangerous("it runs a script it wrote itself with content that cannot be checked")
        return text

    def program(self, script: Arg, st: State, what: str, code_check: object) -> None:
        """A shell or interpreter reads its program from ``script`` ("-" for its input)."""
        if script.procsub:
            raise Dangerous(f"it runs the output of another command as a program ({what})")
        if script.dynamic:
            raise Dangerous(f"it runs a script whose name is computed at run time ({what})")
        written = self.script_file(Arg("./" + script.text if "/" not in script.text else script.text), st) \
            if script.text != "-" else None
        if written is not None:
            if callable(code_check):
                code_check(written)
            else:
                self.script(written, st)
            return
        if script.text not in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
            return
        stdin = st.stdin
        if stdin is None:
            return
        if stdin.text is not None:
            if callable(code_check):
                code_check(stdin.text)
            else:
                self.script(stdin.text, st)
        elif stdin.download:
            raise Dangerous(f"it pipes a download into {what}")
        elif stdin.file is None or stdin.file.startswith("/dev/fd/"):
            raise Dangerous(f"it pipes another command's output into {what}, which cannot be checked")
