"""Markdown code fences for a small model's edits said in words (agent/tools/described.py, docs/loop.md §9.8).

A file that holds fenced blocks itself (a README) cannot be shown or written back inside a plain ``` block:
its first inner ``` ends the block. It is shown inside a longer fence (````), and a reply is read the way
CommonMark reads it: a block ends at a bare fence line of its own kind at least as long as its opening one.
A reply the model fenced with ``` anyway still reads right when its inner blocks open with a language
(```bash ... ```): a fence line with an info string opens an inner block, whose next bare fence closes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RUN = re.compile(r"`{3,}")
_OPEN = re.compile(r"[^`~]*(`{3,}|~{3,})([^`\n]*)$")  # "Here it is: ```python"; not a ```x``` in prose
_MARKDOWN = frozenset({".md", ".markdown", ".mdx"})

LANG = {".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".ts": "typescript",
        ".rs": "rust", ".go": "go", ".md": "markdown", ".toml": "toml", ".json": "json", ".sh": "bash", ".c": "c",
        ".java": "java"}  # a code block's language, by the file's suffix


def fence_for(body: str) -> str:
    """A backtick fence longer than every run of 3 or more backticks in ``body``."""
    return "`" * max([3, *(len(run) + 1 for run in _RUN.findall(body))])


@dataclass(frozen=True)
class Block:
    body: str
    closed: bool
    info: str = ""  # what follows the opening fence: ``python``, ``diff``


def code_blocks(reply: str) -> list[Block]:
    """The fenced blocks of ``reply`` in order; an unclosed one (the reply was cut off) ends the list."""
    lines = reply.split("\n")
    blocks: list[Block] = []
    last = max((k for k, x in enumerate(lines) if x.strip()), default=-1)  # the reply's last non-blank line
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        i += 1
        if m is None:
            continue
        char, size, info = m.group(1)[0], len(m.group(1)), m.group(2).strip().lower()
        inner = re.compile(rf"{re.escape(char)}{{{size},}}(.*)")
        depth = 0
        body: list[str] = []
        while i < len(lines):
            line = lines[i]
            i += 1
            f = inner.fullmatch(line.strip())
            if f is not None and char == "`" and "`" in f.group(1):
                f = None  # ```x``` on a line of its own is text
            if f is not None and not f.group(1).strip() and not depth:
                blocks.append(Block("".join(x + "\n" for x in body), True, info))
                break
            if f is not None:
                depth += 1 if f.group(1).strip() else -1  # a fence with a language opens an inner block
            elif not depth and i - 1 == last and line.rstrip().endswith(char * size):
                body.append(line.rstrip()[:-size])  # "b = 2```" at the very end
                blocks.append(Block("".join(x + "\n" for x in body), True, info))
                break
            body.append(line)
        else:
            blocks.append(Block("\n".join(body), False))
            break
    return blocks


_WRAPPED = re.compile(r"\s*(`{3,})([^\n`]*)\n(.*?)\n?\1\s*", re.DOTALL)


def unfenced(content: str, path_suffix: str = "") -> str:
    """``content`` without the one code block it is wrapped in, if it is (a small model's write_file). A
    markdown file may be one code block: only a ``markdown`` block is unwrapped there."""
    m = _WRAPPED.fullmatch(content)
    if m is None or m.group(1) in m.group(3):
        return content
    if path_suffix.lower() in _MARKDOWN and m.group(2).strip().lower() not in ("markdown", "md"):
        return content
    return m.group(3) + "\n"
