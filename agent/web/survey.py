"""One linear pass over a page before it is converted (docs/tools.md "fetch_url"): how many elements it
has and how deep they nest, and its plain text on the side. A page too deep or too large for the tree
conversion (markdownify recurses per level, and a few hundred thousand elements take tens of seconds) is
shown as that text instead, with a note. The pass never recurses, and is fed in pieces against a time
budget: the standard library's parser goes quadratic on some junk (``</`` repeated), so a pass that runs
out of time gives way to stripping the tags with a bounded pattern."""

from __future__ import annotations

import html as entities
import re
import time
from dataclasses import dataclass
from html.parser import HTMLParser

MAX_DEPTH = 200
MAX_ELEMENTS = 60_000
MAX_REFERENCES = 50_000  # ``&...;`` (the tree builder handles each one separately, slowly)
LEFTOVER = 4096  # unparsed bytes at the end: more means junk whose close() is quadratic
BUDGET = 3.0  # seconds for the pass
PIECE = 32_768
_TAG = re.compile(r"<[A-Za-z/!?][^<>]*>")  # linear: a failed try stops at the next "<"
_MATCH_WINDOW = 64  # an end tag closes one of the innermost open elements, or nothing
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
                  "track", "wbr"})
HIDDEN = frozenset({"script", "style", "noscript", "template", "iframe", "svg", "canvas", "object", "head"})
BLOCK = frozenset({"p", "div", "section", "article", "header", "footer", "main", "nav", "aside", "li", "ul", "ol",
                   "table", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "dd", "dt", "br",
                   "hr", "form", "figure", "details", "summary"})


@dataclass(frozen=True)
class Survey:
    elements: int
    depth: int
    title: str
    text: str
    finished: bool = True
    references: int = 0

    @property
    def too_large(self) -> bool:
        return self.depth > MAX_DEPTH or self.elements > MAX_ELEMENTS or self.references > MAX_REFERENCES

    @property
    def too_complex(self) -> bool:
        return not self.finished or self.too_large

    def note(self) -> str:
        if not self.finished and not self.too_large:
            return (f"[this page could not be parsed (not well-formed HTML, or too large to parse within {BUDGET:g} s): "
                    "shown as its text with the tags removed]")
        more = " or more" if not self.finished else ""
        return (f"[this page has {self.elements:,}{more} elements nested {self.depth:,}{more} deep and "
                f"{self.references:,} character references, more than fetch_url converts to Markdown "
                f"({MAX_ELEMENTS:,} elements, {MAX_DEPTH} deep, {MAX_REFERENCES:,} references): shown as plain text]")


class _Pass(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.elements = 0
        self.depth = 0
        self.hidden = 0
        self.in_title = False
        self.title: list[str] = []
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.elements += 1
        if tag in BLOCK:
            self.parts.append("\n")
        if tag in VOID:
            return
        self.stack.append(tag)
        self.depth = max(self.depth, len(self.stack))
        self.hidden += tag in HIDDEN
        self.in_title = self.in_title or tag == "title"

    def handle_startendtag(self, tag: str, attrs: object) -> None:
        self.elements += 1

    def handle_endtag(self, tag: str) -> None:
        stack = self.stack
        for i in range(len(stack) - 1, max(-1, len(stack) - 1 - _MATCH_WINDOW), -1):
            if stack[i] == tag:
                for closed in stack[i:]:
                    self.hidden -= closed in HIDDEN
                    self.in_title = self.in_title and closed != "title"
                del stack[i:]
                break
        if tag in BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.hidden:
            self.parts.append(data)


def _tidy(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def survey(html: str, budget: float = BUDGET) -> Survey:
    parser = _Pass()
    references = html.count("&")
    deadline = time.monotonic() + budget
    for start in range(0, len(html), PIECE):
        parser.feed(html[start:start + PIECE])
        if time.monotonic() > deadline:
            break
    else:
        leftover = parser.rawdata  # never close(): on junk it rescans the rest once per "<"
        if len(leftover) <= LEFTOVER:
            parser.parts.append(entities.unescape(_TAG.sub("\n", leftover)))
            title = " ".join("".join(parser.title).split())
            return Survey(parser.elements, parser.depth, title, _tidy("".join(parser.parts)), True, references)
    text = entities.unescape(_TAG.sub("\n", html))
    return Survey(parser.elements, parser.depth, "", _tidy(text), False, references)
