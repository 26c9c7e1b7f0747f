"""The walk over a parsed command line (tree-sitter-bash): every simple command wherever it sits
(subshells, groups, conditionals, loops, functions, pipelines, substitutions, here-documents, and the
code given to ``sh -c``, ``eval``, ``su -c``, ``watch``, ``env -S``, recursively), each judged once its
wrappers are looked through."""

from __future__ import annotations

import shlex

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from .targets import absolute, protected, secret
from .programs import Programs
from .state import Dangerous, Source, State
from .words import evaluate, text_of

MAX_LENGTH = 1_000_000
_LANGUAGE = Language(tree_sitter_bash.language())
_REDIRECTS = ("file_redirect", "heredoc_redirect", "herestring_redirect")
_WRITE_OPS = (">", ">>", ">|", "&>", "&>>", "<>", ">&")
_UNPARSED = "it could not be parsed as a shell command, so it cannot be checked"


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


class Walker(Programs):
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

    def parse(self, text: str, st: State) -> None:
        check_script(text, st)

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
