"""An honest no-op: a described edit asked to remove or change what the file does not have (docs/loop.md §9.8).

"Delete the TODO line from notes.txt" on a file with no TODO used to cost five failing edits and an answer
claiming the deletion. Now the edit says so plainly and changes nothing ("notes.txt has no line containing
TODO"), the result starts with ``NOTHING_TO_CHANGE``, and the next step may only answer (loop/request.py).
The check is made before the model is asked for the new text, and again when the rewrite came back the same.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

NOTHING_TO_CHANGE = "nothing to change: "
_KINDS = (r"word|line|function|def|class|method|import|constant|variable|comment|text|string|entry|key|setting|"
          r"value|call|mention|reference|section|heading|field")
_ASKED = re.compile(
    r"\b(?:remove|delete|drop|strip out|get rid of|rename|replace|change)\s+"
    r"(?:(?:all|every|each|the|any|a|an|this|that)\s+)*"
    rf"(?:({_KINDS})s?\s+)?(?:(?:containing|with|that says|which says|saying|mentioning|called|named)\s+)?"
    r"(\"[^\"\n]+\"|'[^'\n]+'|`[^`\n]+`|[A-Za-z_][\w.-]*)",
    re.IGNORECASE)
_VAGUE = frozenset({"it", "this", "that", "them", "these", "those", "all", "everything", "file", "line", "lines",
                    "word", "text", "code", "function", "class", "bug", "one", "what", "something", "anything",
                    "comment", "comments", "value", "name", "to", "in", "from", "of", "with"})
_CODE_LIKE = re.compile(r"[A-Z_0-9]")
_FILE = re.compile(r"[\w][\w./-]*\.[A-Za-z0-9]+")


def _terms(request: str) -> list[str]:
    out = []
    for m in _ASKED.finditer(request):
        raw = m.group(2)
        term = raw.strip("\"'`").rstrip(".,;:")
        if not term or term.lower() in _VAGUE or _FILE.fullmatch(term):
            continue
        if raw[0] in "\"'`" or m.group(1) or _CODE_LIKE.search(term):  # not a plain word ("the greeting word")
            out.append(term)
    return out


def absent(request: str, rel: str, text: str) -> str | None:
    """"notes.txt has no line containing TODO" when the request asks to remove or change something ``text``
    lacks (any case), and names this file alone or no file at all; else None."""
    named = {t.rstrip(".").removeprefix("./") for t in _FILE.findall(request)} - {rel, PurePosixPath(rel).name}
    if named:
        return None
    lower = text.lower()
    for term in _terms(request):
        if term.lower() not in lower:
            return f"{rel} has no line containing {term}"
    return None


def result_text(why: str) -> str:
    return (f"{NOTHING_TO_CHANGE}{why}, so nothing was changed. Tell the user that plainly; do not say the "
            "change was made.")
