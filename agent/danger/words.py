"""The value of a shell word as far as it can be known before it runs: quotes removed, ``$'…'`` decoded,
known variables, ``~`` and braces expanded. What only the running shell can know (an unknown variable,
a command substitution) makes the word *dynamic*: its text is then the static part before the first
unknown piece."""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass

from tree_sitter import Node

from .state import State

MAX_VALUES = 64  # brace and multi-valued variable expansion stops here


@dataclass(frozen=True)
class Arg:
    text: str
    dynamic: bool = False
    # set for a process substitution `<(…)` and for arguments that xargs appends from its input
    procsub: bool = False
    from_input: bool = False

    @property
    def static(self) -> str | None:
        return None if self.dynamic else self.text


_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
         "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_RE = re.compile(r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|"
                      r"U([0-9a-fA-F]{1,8})|c(.))", re.S)


def decode_ansi_c(body: str) -> str:
    """The value of ``$'body'``."""
    def one(m: re.Match[str]) -> str:
        simple, octal, hx, u4, u8, ctrl = m.groups()
        if simple:
            return _ANSI[simple]
        if octal:
            return chr(int(octal, 8) & 0xFF)
        if hx:
            return chr(int(hx, 16))
        if u4 or u8:
            code = int(u4 or u8, 16)
            return chr(code) if code < 0x110000 else ""
        return chr(ord(ctrl) & 0x1F)
    return _ANSI_RE.sub(one, body)


def _unescape(text: str, quoted: bool) -> str:
    """Backslash removal: outside quotes every ``\\x`` is ``x``; inside double quotes only before $`"\\."""
    if "\\" not in text:
        return text
    if quoted:
        return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)
    return re.sub(r"\\(.)", lambda m: "" if m.group(1) == "\n" else m.group(1), text, flags=re.S)


_BRACE = re.compile(r"\{([^{}]*)\}")


def expand_braces(text: str) -> list[str]:
    """Bash brace expansion (comma lists and ``a..b`` sequences), bounded."""
    out: list[str] = []
    todo = [text]
    while todo and len(out) < MAX_VALUES:
        word = todo.pop(0)
        for m in _BRACE.finditer(word):
            inner = m.group(1)
            parts: list[str] | None = None
            if "," in inner:
                parts = inner.split(",")
            else:
                seq = re.fullmatch(r"(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])(?:\.\.-?\d+)?", inner)
                if seq:
                    a, b = seq.group(1), seq.group(2)
                    if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
                        lo, hi = int(a), int(b)
                        step = 1 if hi >= lo else -1
                        parts = [str(i) for i in range(lo, hi + step, step)][:MAX_VALUES]
                    elif a.isalpha() and b.isalpha():
                        step = 1 if ord(b) >= ord(a) else -1
                        parts = [chr(i) for i in range(ord(a), ord(b) + step, step)]
            if parts is not None:
                todo.extend(word[:m.start()] + p + word[m.end():] for p in parts)
                break
        else:
            out.append(word)
    return out or [text]


def _tilde(text: str, state: State) -> tuple[str, bool]:
    """Tilde expansion of an unquoted word's start; (text, dynamic)."""
    head, sep, rest = text.partition("/")
    if head == "~":
        return state.home + sep + rest, False
    if head == "~+":
        return (state.cwd + sep + rest, False) if state.cwd else ("", True)
    if head == "~-":
        return "", True
    expanded = os.path.expanduser(head)
    if expanded == head:
        expanded = "/home/" + head[1:]  # another user's home: outside, whatever it is
    return expanded + sep + rest, False


# One piece of a word: (text, dynamic, quoted). Several alternatives when a variable has several values.
Piece = tuple[str, bool, bool]


def _lookup(name: str, state: State) -> list[str] | None:
    if name == "HOME":
        return [state.home]
    if name == "PWD":
        return [state.cwd] if state.cwd else None
    return state.variable(name)


def _expansion(node: Node, state: State) -> list[str] | None:
    """``$X``, ``${X}``, ``${X:?}``, ``${X:?message}``: the variable's values; anything else is unknown."""
    kids = [c for c in node.children if c.type not in ("$", "${", "}")]
    if not kids or kids[0].type != "variable_name":
        return None
    if len(kids) > 1 and not (kids[1].type in (":?", "?") and len(kids) <= 3):
        return None
    return _lookup(_text(kids[0]), state)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def pieces(node: Node, state: State, quoted: bool = False) -> list[list[Piece]]:
    """The alternatives of a word node, each a list of pieces."""
    kind = node.type
    if kind in ("word", "number", "special_variable_name"):
        return [[(_unescape(_text(node), quoted), False, quoted)]]
    if kind == "raw_string":
        return [[(_text(node)[1:-1], False, True)]]
    if kind == "ansi_c_string":
        return [[(decode_ansi_c(_text(node)[2:-1]), False, True)]]
    if kind in ("simple_expansion", "expansion"):
        values = _expansion(node, state)
        if values is None:
            return [[("", True, quoted)]]
        return [[(v, False, True)] for v in values[:MAX_VALUES]]
    if kind in ("string", "translated_string"):
        return _sequence(node, state, quoted=True, inner=True)
    if kind == "concatenation":
        return _sequence(node, state, quoted=quoted, inner=False)
    if kind == "brace_expression":
        return [[(_text(node), False, False)]]
    return [[("", True, quoted)]]  # command/process substitution, arithmetic, anything else


def _sequence(node: Node, state: State, quoted: bool, inner: bool) -> list[list[Piece]]:
    alternatives: list[list[Piece]] = [[]]
    raw = node.text or b""
    pos = node.start_byte + (1 + (node.type == "translated_string") if inner else 0)
    end = node.end_byte - (1 if inner else 0)
    for child in node.children:
        if child.type in ('"', '$"'):
            continue
        if child.start_byte > pos:  # text no child covers is literal
            gap = raw[pos - node.start_byte:child.start_byte - node.start_byte].decode("utf-8", "replace")
            alternatives = [a + [(_unescape(gap, quoted), False, quoted)] for a in alternatives]
        if child.type == "string_content":
            options = [[(_unescape(_text(child), True), False, True)]]
        else:
            options = pieces(child, state, quoted)
        alternatives = [a + o for a, o in itertools.product(alternatives, options)][:MAX_VALUES]
        pos = child.end_byte
    if end > pos:
        gap = raw[pos - node.start_byte:end - node.start_byte].decode("utf-8", "replace")
        alternatives = [a + [(_unescape(gap, quoted), False, quoted)] for a in alternatives]
    return alternatives


def evaluate(node: Node, state: State, split: bool = True) -> list[Arg]:
    """The arguments a word node becomes (several after brace expansion or a multi-valued variable)."""
    if node.type == "command_name" and node.named_children:
        node = node.named_children[0]
    if node.type == "process_substitution":
        return [Arg("", dynamic=True, procsub=True)]
    args: list[Arg] = []
    for alternative in pieces(node, state):
        text, dynamic = "", False
        for piece, unknown, _ in alternative:
            if unknown:
                dynamic = True
                break
            text += piece
        first_unquoted = bool(alternative) and not alternative[0][2]
        words = expand_braces(text) if first_unquoted and "{" in text and not dynamic else [text]
        for word in words:
            word_dynamic = dynamic
            if first_unquoted and word.startswith("~"):
                word, tilde_dynamic = _tilde(word, state)
                word_dynamic = word_dynamic or tilde_dynamic
            # an unquoted variable holding spaces splits into several words (IFS permitting)
            if split and not word_dynamic and node.type in ("simple_expansion", "expansion"):
                if state.ifs_changed:
                    args.append(Arg("", dynamic=True))
                    continue
                args.extend(Arg(w) for w in word.split())
                continue
            args.append(Arg(word, dynamic=word_dynamic))
    return args[:MAX_VALUES] or [Arg("")]


def text_of(node: Node) -> str:
    return _text(node)
