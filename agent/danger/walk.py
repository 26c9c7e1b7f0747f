"""The walk over a parsed command line (tree-sitter-bash): every simple command wherever it sits
(subshells, groups, conditionals, loops, functions, pipelines, substitutions, here-documents, and the
code given to ``sh -c``, ``eval``, ``su -c``, ``watch``, ``env -S``, recursively), each judged once its
wrappers are looked through."""

from __future__ import annotations

import re
import shlex

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from agentls.agent.danger import rules
from agentls.agent.danger.inline import check_code, inline_code, interpreter
from agentls.agent.danger.paths import absolute, protected, secret
from agentls.agent.danger.state import Dangerous, Source, State
from agentls.agent.danger.words import Arg, evaluate, text_of
from agentls.agent.danger.wrappers import name_of, unwrap

MAX_LENGTH = 1_000_000
_LANGUAGE = Language(tree_sitter_bash.language())
_SHELL = re.compile(r"^(sh|bash|dash|zsh|ksh|ksh93|mksh|pdksh|ash|fish|tcsh|csh|yash|posh|rbash|oksh)$")
_DOWNLOAD = frozenset({"curl", "wget", "fetch", "aria2c", "nc", "ncat", "netcat", "socat", "http", "https",
                       "lynx", "links", "w3m", "ftp", "tftp", "lwp-request", "GET"})
_DECODE = frozenset({"base64", "base32", "basenc", "xxd", "openssl", "gunzip", "gzip", "zcat", "bzip2", "bzcat",
                     "xz", "xzcat", "unxz", "zstd", "zstdcat", "rev", "tr", "uudecode", "tac", "sed", "cut"})
_REDIRECTS = ("file_redirect", "heredoc_redirect", "herestring_redirect")
_WRITE_OPS = (">", ">>", ">|", "&>", "&>>", "<>", ">&")
_UNPARSED = "it could not be parsed as a shell command, so it cannot be checked"


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


def check_script(text: str, state: State) -> None:
    """Raise Dangerous if the shell code ``text`` is clearly dangerous."""
    if len(text) > MAX_LENGTH:
        raise Dangerous("it is too long to check")
    variants = [text]
    if "\\\n" in text:  # line continuations, removed the way the shell removes them
        variants.append(text.replace("\\\n", ""))
    for variant in variants:
        tree = Parser(_LANGUAGE).parse(variant.encode("utf-8", "surrogateescape"))
        if tree.root_node.has_error:
            raise Dangerous(_UNPARSED)
        Walker().walk(tree.root_node, state if len(variants) == 1 else state.fork())


class Walker:
    def walk(self, node: Node, st: State) -> None:
        st.budget.spend()
        kind = node.type
        if kind in ("subshell", "command_substitution", "process_substitution"):
            inner = st.fork()
            for child in node.children:
                self.walk(child, inner)
        elif kind == "pipeline":
            self.pipeline([c for c in node.named_children if c.type != "comment"], st)
        elif kind == "redirected_statement":
            self.redirected(node, st)
        elif kind == "command":
            self.command(node, st, [])
        elif kind == "variable_assignment":
            self.assign(node, st)
        elif kind == "declaration_command":
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self.assign(child, st)
                else:
                    self.walk(child, st.fork())
        elif kind == "unset_command":
            for child in node.named_children:
                st.variables[text_of(child)] = ("",)
        elif kind == "function_definition":
            self.function(node, st)
        elif kind == "for_statement":
            self.loop(node, st)
        else:
            for child in node.children:
                self.walk(child, st)

    # -- statements -------------------------------------------------------------------------------------

    def pipeline(self, elements: list[Node], st: State, first_stdin: Source | None = None) -> Source:
        source = first_stdin if first_stdin is not None else st.stdin
        for element in elements:
            inner = st.fork()
            inner.stdin = source
            source = self.element(element, inner)
        return source or Source()

    def element(self, node: Node, st: State) -> Source:
        if node.type == "command":
            return self.command(node, st, [])
        if node.type == "redirected_statement":
            return self.redirected(node, st)
        self.walk(node, st)
        return Source()

    def redirected(self, node: Node, st: State) -> Source:
        body = node.child_by_field_name("body")
        redirects = [c for c in node.children if c.type in _REDIRECTS]
        tails: list[Node] = []
        for redirect in redirects:
            if redirect.type == "heredoc_redirect":
                for child in redirect.children:
                    if child.type == "heredoc_body":
                        self.walk(child, st.fork())
                    elif child.type not in ("<<", "<<-", "heredoc_start", "heredoc_end"):
                        tails.append(child)
            else:
                self.walk(redirect, st.fork())
        pipe = next((t for t in tails if t.type == "pipeline"), None)
        if body is not None and body.type == "command":
            out = self.command(body, st if pipe is None else st.fork(), redirects)
        else:
            inner_stdin = self.redirections(redirects, st)
            saved = st.stdin
            st.stdin = inner_stdin or st.stdin
            if body is not None:
                self.walk(body, st)
            st.stdin = saved
            out = Source()
        if pipe is not None:
            out = self.pipeline([c for c in pipe.named_children if c.type != "comment"], st, out)
        for tail in tails:
            if tail is not pipe:
                self.walk(tail, st)
        return out

    def assign(self, node: Node, st: State) -> None:
        name_node = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name_node is None:
            return
        name = text_of(name_node)
        if value is not None:
            self.walk(value, st.fork())
        if any(c.type == "+=" for c in node.children) or (value is not None and value.type == "array"):
            st.variables[name] = None
            return
        if value is None:
            st.variables[name] = ("",)
        else:
            args = evaluate(value, st, split=False)
            st.variables[name] = None if any(a.dynamic for a in args) else tuple(a.text for a in args)
        if name == "IFS" and st.variables[name] != (" \t\n",):
            st.ifs_changed = True

    def function(self, node: Node, st: State) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        name = text_of(name_node) if name_node is not None else ""
        st.functions.add(name)
        if body is None:
            return
        stack = [body]
        while stack:
            current = stack.pop()
            if current.type == "command":
                called = current.child_by_field_name("name")
                if called is not None and text_of(called) == name:
                    raise Dangerous("it defines a function that calls itself (a fork bomb)")
            stack.extend(current.children)
        self.walk(body, st.fork())

    def loop(self, node: Node, st: State) -> None:
        variable = node.child_by_field_name("variable")
        values = node.children_by_field_name("value")
        if variable is not None:
            args = [a for v in values for a in evaluate(v, st)]
            st.variables[text_of(variable)] = None if not values or any(a.dynamic for a in args) else \
                tuple(a.text for a in args)
        for child in node.children:
            if child.type == "do_group" or child.type not in ("variable_name", "word"):
                self.walk(child, st)

    # -- simple commands -------------------------------------------------------------------------------

    def command(self, node: Node, st: State, redirects: list[Node]) -> Source:
        for child in node.children:  # substitutions anywhere in it run first, each in a subshell
            if child.type != "variable_assignment":
                self.walk(child, st.fork())
        redirects = redirects + [c for c in node.children if c.type in _REDIRECTS]
        name = node.child_by_field_name("name")
        saved_ifs = st.ifs_changed
        for child in node.children:
            if child.type == "variable_assignment":
                scratch = st.fork()
                self.assign(child, scratch)  # a prefix assignment lives for this command only
                st.ifs_changed = st.ifs_changed or (scratch.ifs_changed and name is None)
        stdin = self.redirections(redirects, st) or st.stdin
        if name is None:
            return Source()
        words = evaluate(name, st) + [a for arg in node.children_by_field_name("argument") for a in evaluate(arg, st)]
        alias = st.aliases.get(words[0].text) if words and not words[0].dynamic else None
        if alias is not None:
            rest = " ".join(shlex.quote(a.text) if not a.dynamic else '"$__agentls_unknown"' for a in words[1:])
            del st.aliases[words[0].text]  # an alias is not expanded inside itself
            try:
                self.script(f"{alias} {rest}", st, same_shell=True)
            finally:
                st.aliases[words[0].text] = alias
            return Source()
        saved = st.stdin
        st.stdin = stdin
        try:
            out = self.words(words, st)
        finally:
            st.stdin = saved
            st.ifs_changed = saved_ifs or st.ifs_changed
        for path in self.written(redirects, st):  # a script written here may be run later in the line
            st.files[path] = out.text
        return out

    def written(self, redirects: list[Node], st: State) -> list[str]:
        paths: list[str] = []
        for redirect in redirects:
            if redirect.type != "file_redirect":
                continue
            descriptor = redirect.child_by_field_name("descriptor")
            ops = [c.type for c in redirect.children if not c.is_named]
            target = redirect.child_by_field_name("destination")
            if target is None or (descriptor is not None and text_of(descriptor) != "1") or \
                    not any(op in (">", ">>", ">|", "&>", "&>>") for op in ops):
                continue
            for arg in evaluate(target, st, split=False):
                path = absolute(arg.text, st) if not arg.dynamic else None
                if path:
                    paths.append(path)
        return paths

    def redirections(self, redirects: list[Node], st: State) -> Source | None:
        stdin: Source | None = None
        for redirect in redirects:
            if redirect.type == "heredoc_redirect":
                body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
                stdin = Source(text=text_of(body) if body is not None else "")
            elif redirect.type == "herestring_redirect":
                args = [a for c in redirect.named_children for a in evaluate(c, st, split=False)]
                stdin = Source(text=" ".join(a.text for a in args)) if not any(a.dynamic for a in args) \
                    else Source()
            else:
                ops = [c.type for c in redirect.children if not c.is_named]
                target = redirect.child_by_field_name("destination")
                if target is None:
                    continue
                for arg in evaluate(target, st, split=False):
                    if arg.static is not None and arg.text.isdigit() or arg.text == "-":
                        continue
                    if any(op in _WRITE_OPS for op in ops):
                        found = protected(arg, st)
                        if found:
                            raise Dangerous(f"it writes to {found} ({arg.text})")
                    path = absolute(arg.text, st) if arg.static is not None else None
                    if path and secret(path, st):
                        raise Dangerous(f"it touches {secret(path, st)}")
                    if "<" in ops:
                        stdin = Source(download=arg.text.startswith(("/dev/tcp/", "/dev/udp/")),
                                       file=None if arg.procsub or arg.dynamic else arg.text)
        return stdin

    def script(self, text: str, st: State, same_shell: bool = False) -> None:
        if same_shell:
            st.depth += 1
            try:
                if st.depth > 6:
                    raise Dangerous("it nests shells too deeply to check")
                check_script(text, st)
            finally:
                st.depth -= 1
        else:
            check_script(text, st.nested())

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
        elif name == "find":
            rules.find(args, st, self.check_words)
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
            check_code(code.text, st, check_script)
        if script is not None:
            self.program(script, st, name, lambda text: check_code(text, st, check_script))

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
