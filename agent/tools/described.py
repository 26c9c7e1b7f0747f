"""The small model's ``edit_file``: the change said in words, the new text asked for as one code block and
checked before it is written (docs/loop.md §9.8)."""

from __future__ import annotations

import contextlib
import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import noop, overwrite
from .brackets import closes_a_rewritten_block
from .base import JsonObject, ToolContext, ToolFailure, ToolOutput
from .fences import LANG, code_blocks, fence_for
from .guards import breaks_python, locate, may_change, with_note
from .imports import with_imports
from .keep_names import lost_names
from .stubs import still_stubs
from .matching import without_line_numbers
from .writing import existing_text, write_checked

WHOLE_FILE_LINES = 80  # files up to this many lines are rewritten whole
WINDOW_LINES = 50  # otherwise: this many lines around the place the change names
MAX_REQUEST_CHARS = 1200
MAX_REWRITE_CHARS = 16_000  # a window longer than this (long lines) is not asked for
RESAMPLE_TEMPERATURE = 0.7  # a rewrite that came back unchanged is asked for once more, sampling
UNCHANGED = ("\nYour reply was the text exactly as it is now, with nothing changed. Reply again with the text "
             "with the change made.")

# The parameters the small model is shown for edit_file; its calls are validated against ``ACCEPTED_EDIT``: one
# that sends old_string and new_string anyway gets the ordinary edit.
DESCRIBED_EDIT: dict[str, Any] = {
    "type": "object", "properties": {"path": {"type": "string"}, "change": {"type": "string"}},
    "required": ["path", "change"]}
ACCEPTED_EDIT: dict[str, Any] = {
    "type": "object", "properties": {"path": {"type": "string"}, "change": {"type": "string"},
                                     "old_string": {"type": "string"}, "new_string": {"type": "string"},
                                     "replace_all": {"type": "boolean"}},
    "required": ["path"], "additionalProperties": False}

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
# Not "strip" (``.strip()``) nor "without" ("work without a name"): a cut-off rewrite would lose the rest of the file.
_REMOVAL = re.compile(r"\b(remove|delete|drop|cut|get rid|clean ?up|shorten|replace (it|the file|everything|all))"
                      r"(s|d|ed|ing|ped|ping|ting)?\b", re.IGNORECASE)
_ADDING = re.compile(r"\b(add|append|insert|include)(s|ed|ing)?\b", re.IGNORECASE)
_REPLACING = re.compile(r"\b(replace|instead|rename|change|set|rewrite|convert|turn|fix|update|move)"
                        r"(s|d|ed|ing|ting)?\b", re.IGNORECASE)
_KEYWORDS = frozenset({"def", "class", "return", "import", "from", "if", "elif", "else", "for", "while", "let",
                       "const", "var", "fn", "pub", "async", "await", "export", "function", "static", "public",
                       "private", "self", "this", "not", "and", "or", "in", "is"})
_AT_END = re.compile(r"\b(end|bottom|append|last line|after the last)\b", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^\s*(#|//|--|/\*|\*|<!--)\s*(\.\.\.|…)"
                          r"|^\s*(#|//|--|/\*|<!--)\s*.*\b(rest of|unchanged|existing code|same as before)\b",
                          re.IGNORECASE)
_STUB_BODY = re.compile(r"^[ \t]+(?:pass|\.\.\.|raise NotImplementedError(?:\(\))?)[ \t]*(?:#.*)?$", re.MULTILINE)
_STOP_WORDS = frozenset({"the", "and", "for", "with", "that", "this", "from", "into", "file", "line", "lines",
                         "change", "changes", "add", "set", "make", "function", "def", "class", "return", "not"})


class RewriteRefused(Exception):
    """The rewrite cannot be used; the message says why and what to do (a tool error for the model)."""


@dataclass(frozen=True)
class Window:
    start: int  # 0-based index of the first line
    end: int  # one past the last line
    lines: tuple[str, ...]  # every line of the file, each with its line ending

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.end == len(self.lines)

    @property
    def text(self) -> str:
        return "".join(self.lines[self.start:self.end])

    def scope(self) -> str:
        if self.whole:
            return "(the whole file)"
        return (f"lines {self.start + 1}-{self.end} (only these lines; the {len(self.lines)}-line file's other lines "
                "stay as they are)")

    def splice(self, new: str) -> str:
        return "".join(self.lines[:self.start]) + new + "".join(self.lines[self.end:])


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP_WORDS


def window_for(text: str, change: str, request: str) -> Window:
    """The part of the file to rewrite: all of it when short, else the ``WINDOW_LINES`` lines around the line
    that shares the most names with the change (the end of the file for "at the end")."""
    lines = tuple(text.splitlines(keepends=True))
    if len(lines) <= WHOLE_FILE_LINES:
        return Window(0, len(lines), lines)
    if _AT_END.search(change) and not _words(change) & _words(text):
        return Window(len(lines) - WINDOW_LINES, len(lines), lines)
    wanted = _words(change) or _words(request)
    scores = [len(_words(line) & wanted) for line in lines]
    best = max(range(len(lines)), key=lambda i: (scores[i], -i))
    if scores[best] == 0:
        if _AT_END.search(change) or _AT_END.search(request):
            return Window(len(lines) - WINDOW_LINES, len(lines), lines)
        raise RewriteRefused(f"the file has {len(lines)} lines and the change names nothing in it: say which "
                             "function, name or line to change (for example: \"in parse_date, ...\")")
    start = max(0, min(best - WINDOW_LINES // 3, len(lines) - WINDOW_LINES))
    return Window(start, start + WINDOW_LINES, lines)


def instruction(rel: str, path: Path, window: Window, change: str, request: str) -> str:
    """What the model is asked, as the result of its own edit_file call: the text as it is, then the request
    and the change, then what to reply, last (a small model repeats what it read last: shown the stub last,
    it wrote the stub back)."""
    if len(request) > MAX_REQUEST_CHARS:
        request = request[:MAX_REQUEST_CHARS] + " [...]"
    lang = LANG.get(path.suffix.lower(), "")
    body = window.text
    fence = fence_for(body)  # a README's own ``` blocks stay inside it
    asked = f"The user asked: {request.strip()}\n"
    if change.strip() not in request:
        asked += f"The change: {change.strip()}\n"
    if path.suffix == ".py" and _STUB_BODY.search(body):
        asked += "Its bodies that are only `pass` or `...` are stubs: write their code.\n"
    return (f"{rel} {window.scope()} now:\n{fence}{lang}\n{body}{'' if body.endswith(chr(10)) else chr(10)}{fence}\n"
            f"{asked}To make this change, reply with the new text of {rel} {window.scope()} with the change made, in "
            f"one {fence} code block. Write every line of it, changed or not. Reply with the code block only: no "
            "JSON, no tool call.")


def _from_json(reply: str, current: str | None) -> str | None:
    """A reply that came back as a tool call or final answer anyway: the text in it. An ``old_string`` and
    ``new_string`` is applied to ``current`` when it is there once (``new_string`` alone is no file)."""
    try:
        value, _ = json.JSONDecoder().raw_decode(reply.strip())
    except ValueError:
        return None
    args = value.get("arguments") if isinstance(value, dict) else None
    if not isinstance(args, dict):
        return None
    old, new = args.get("old_string"), args.get("new_string")
    if isinstance(old, str) and isinstance(new, str):
        return current.replace(old, new) if old and current is not None and current.count(old) == 1 else None
    for key in ("content", "new_text", "code", "text"):
        if isinstance(args.get(key), str):
            return str(args[key])
    return None


def extract(reply: str, current: str | None = None) -> str:
    """The new text from the model's reply: its first code block that is not just ``current`` (a model may
    show the old text before the new). Raises RewriteRefused."""
    inner = _from_json(reply, current) if reply.lstrip().startswith("{") else None
    if inner is not None and not inner.lstrip().startswith(("```", "~~~")):
        return inner  # the file itself (a README's own ``` blocks included)
    numbered = current is not None and without_line_numbers(current) is not None  # "1\tapple": a .tsv's own
    diff_ok = current is not None and _diff_like(current)
    blocks: list[str] = []
    diffs = 0
    for block in code_blocks(inner if inner is not None else reply):
        if not block.closed:
            if not blocks:
                raise RewriteRefused("the model's reply was cut off before its code block ended")
            break
        if not diff_ok and (block.info in ("diff", "patch") or _diff_like(block.body)):
            diffs += 1  # "-name = 'demo'\n+name = 'prod'" is not the file's new text
            continue
        stripped = None if numbered else without_line_numbers(block.body)
        blocks.append(stripped if stripped is not None and stripped.strip() else block.body)
    if not blocks:
        raise RewriteRefused("the model replied with a diff, not with the new text" if diffs else
                             "the model's reply had no code block with the new text")
    return next((b for b in blocks if current is None or b.rstrip() != current.rstrip()), blocks[0])


def _diff_like(text: str) -> bool:
    """Every line a diff's (``+``, ``-``, `` ``, ``@@``), with an added and a removed line or a hunk header."""
    lines = [x for x in text.splitlines() if x.strip()]
    marks = {x[0] for x in lines}
    return bool(lines) and all(x.startswith(("+", "-", " ", "@@", "\\")) for x in lines) and \
        ("@" in marks or {"+", "-"} <= marks)


def _likeness(a: str, b: str) -> float:
    a, b = a.strip(), b.strip()
    return 1.0 if a == b else difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() if a and b else 0.0


def _cut_short(old: list[str], new: list[str]) -> tuple[list[str], list[str]] | None:
    """A replaced block the rewrite wrote fewer lines for, each like the old line it stands for: the old
    lines it left out, before and after (``return 1``, then the rest of the file, became just ``return 2``;
    or only the changed line was written). Where the new lines fit best: ``b = 3`` stands for ``b = 2``,
    not for the ``a = 1`` before it."""
    k = len(new)
    if not k or k >= len(old):
        return None
    fits = []
    for o in range(len(old) - k + 1):
        scores = [_likeness(a, b) for a, b in zip(old[o:o + k], new, strict=True)]
        if min(scores) >= 0.5:
            fits.append((sum(scores), o))
    if not fits:
        return None
    _, at = max(fits, key=lambda fit: (fit[0], -fit[1]))
    return old[:at], old[at + k:]


_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")


def _names(line: str) -> set[str]:
    """The names a line uses, outside its string literals and without keywords (``import sys``: {sys})."""
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", _STRING.sub("", line))) - _KEYWORDS


def _overwritten(old: list[str], new: list[str], adding: bool) -> list[str]:
    """For a request that only adds: the old lines of a replaced region that no new line shares a name with
    (the model wrote ``RETRY_DELAY = 5`` over ``RETRIES = 3``, or ``import os`` over ``import sys``, instead
    of next to it). A line without names is left to the rewrite."""
    if not adding:
        return []
    written = [_names(x) for x in new if x.strip()]
    return [x for x in old if x.strip() and (names := _names(x)) and not any(names & w for w in written)]


def only_adds(request: str) -> bool:
    """A request that only adds (``Add the line X at the end``), not one that changes or removes anything."""
    return bool(_ADDING.search(request)) and not _REMOVAL.search(request) and not _REPLACING.search(request)


def restore(old: str, new: str, asked: str, *, adding: bool | None = None, first: int = 1
            ) -> tuple[str, list[str]]:
    """``new`` with what the rewrite evidently lost put back: lines missing at either end, lines a placeholder
    comment stands for, (unless ``asked`` mentions removing something) 2 or more non-blank lines dropped in
    the middle, and (when the request only adds: ``adding``, by default ``only_adds(asked)``) lines the added
    ones were written over. The notes number lines from ``first`` (the window's first line in the file)."""
    old_lines = old.splitlines(keepends=True)
    at = first - 1
    written = new.splitlines(keepends=True)
    copied = {x.strip() for x in old_lines}  # a comment of the file that reads like a placeholder is not one
    new_lines = [x for x in written if not _PLACEHOLDER.match(x) or x.strip() in copied]
    placeheld = len(new_lines) < len(written)  # "# ... rest unchanged": what it stands for stays
    if new_lines and not new_lines[-1].endswith(("\n", "\r")) and old.endswith("\n"):
        new_lines[-1] += "\n"
    removal = bool(_REMOVAL.search(asked)) and not placeheld
    adding = (only_adds(asked) if adding is None else adding) and not removal
    out: list[str] = []
    notes: list[str] = []
    ops = difflib.SequenceMatcher(None, [x.rstrip() for x in old_lines], [x.rstrip() for x in new_lines],
                                  autojunk=False).get_opcodes()

    def lost_for_real(lines: list[str], at_end: bool, last_from: int | None = None) -> bool:
        nonblank = sum(1 for x in lines if x.strip())
        if last_from is not None and closes_a_rewritten_block(old_lines, last_from, lines, "".join(new_lines)):
            return False  # the file's last lines close a block the rewrite replaced whole
        return nonblank > 0 and not removal and (placeheld or at_end or adding or nonblank >= 2)

    def written_over(old_part: list[str], new_part: list[str], i1: int) -> list[str]:
        """``new_part`` and, when the request only adds, the lines of ``old_part`` it was written over."""
        overwritten = _overwritten(old_part, new_part, adding)
        if not overwritten:
            return new_part
        kept = [x for x in old_part if x in overwritten]
        notes.append(f"lines {at + i1 + 1}-{at + i1 + len(old_part)}: the request only adds, and the rewrite had "
                     "written over them")
        return [*new_part, *kept] if i1 == 0 else [*kept, *new_part]  # at the top: the new first

    for n, (tag, i1, i2, j1, j2) in enumerate(ops):
        old_part, new_part = old_lines[i1:i2], new_lines[j1:j2]
        short = _cut_short(old_part, new_part) if tag == "replace" else None
        last = n == len(ops) - 1
        if tag == "delete" and lost_for_real(old_part, n == 0 or last, i1 if last else None):
            out.extend(old_part)
            notes.append(f"lines {at + i1 + 1}-{at + i2}: the rewrite left them out")
        elif short is not None:
            before, after = short
            head = before if lost_for_real(before, n == 0) else []
            tail = after if lost_for_real(after, last, i2 - len(after) if last else None) else []
            notes += [f"lines {a}-{b}: the rewrite left them out" for part, a, b in (
                (head, at + i1 + 1, at + i1 + len(head)), (tail, at + i2 - len(tail) + 1, at + i2)) if part]
            mid = old_part[len(before):len(old_part) - len(after)]
            out.extend([*head, *written_over(mid, new_part, i1 + len(before)), *tail])
        elif tag == "replace":
            out.extend(written_over(old_part, new_part, i1))
        else:
            out.extend(new_part if tag != "equal" else old_part)
    text = "".join(out)
    if old and not old.endswith("\n") and text.endswith("\n") and not new.endswith("\n\n"):
        text = text[:-1]
    return text, notes


def _matched(a: list[str], b: list[str]) -> int:
    return sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())


def _extra(keys: list[str], theirs: list[str], own: list[str]) -> int:
    """How many of ``keys``'s first lines copy ``theirs``'s last ones (with a non-blank line) and stand for
    none of ``own``'s lines (a line the window starts with too is the window's)."""
    whole = _matched(keys, own)
    for k in range(min(len(keys), len(theirs)), 0, -1):
        if keys[k - 1] == theirs[-1] and keys[:k] == theirs[len(theirs) - k:] and any(keys[:k]) and \
                _matched(keys[k:], own) == whole:
            return k
    return 0


def within(window: Window, written: str) -> str:
    """``written`` without the lines outside ``window`` it copied (the model read the whole file and wrote from
    the function's first line, or on past the window's end): splicing them in would double them."""
    if window.whole:
        return written
    lines = written.splitlines(keepends=True)
    keys = [x.rstrip() for x in lines]
    before = [x.rstrip() for x in window.lines[:window.start]]
    after = [x.rstrip() for x in window.lines[window.end:]]
    own = [x.rstrip() for x in window.lines[window.start:window.end]]
    head = _extra(keys, before, own)
    tail = _extra(keys[head:][::-1], after[::-1], own[::-1])
    return "".join(lines[head:len(lines) - tail])


def rewritten(text: str, window: Window, written: str, change: str, request: str,
              path: Path) -> tuple[str, list[str]]:
    """The file's new text from the rewrite of ``window`` of ``text`` (``\n`` endings) and what was kept."""
    written = within(window, written)
    new_window, notes = restore(window.text, written, f"{change}\n{request}", first=window.start + 1,
                                adding=only_adds(request or change))  # the user's words decide
    if notes and breaks_python(path, text, window.splice(new_window)) and \
            not breaks_python(path, text, window.splice(written)):
        new_window, notes = written, []  # what was put back does not fit: the rewrite meant it
    merged = overwrite.merge(text, window.splice(new_window))
    return merged.text, [f"kept {n}" for n in notes] + merged.notes


def _new_text(base: str, window: Window, written: str, change: str, request: str,
              path: Path) -> tuple[str, list[str]]:
    new_text, kept = rewritten(base, window, written, change, request, path)
    if path.suffix == ".py":  # math.exp() written, import math forgotten (agent/tools/imports.py)
        new_text, added = with_imports(new_text)
        kept += [f"added import {name}: the code uses {name} and did not import it" for name in added]
    return new_text, kept


async def described_edit(ctx: ToolContext, args: JsonObject, shown: Callable[[str], Callable[[str], str]]
                         ) -> ToolOutput:
    """``edit_file {path, change}`` (see the module's docstring); ``shown(rel)``: how read_file shows the file."""
    path, note = await locate(ctx, args.get("path"))
    change = args.get("change")
    if not isinstance(change, str) or not change.strip():
        raise ToolFailure("'change' must say in words what to change in the file")
    if ctx.rewrite is None:
        raise ToolFailure("this edit_file needs 'old_string' and 'new_string'")
    rel, text = await existing_text(ctx, path)
    may_change(ctx, path, text, "edit", shown(rel))
    missing = noop.absent(ctx.request, rel, text)
    if missing:  # nothing to remove or change: said plainly, before the model writes anything
        return with_note(ToolOutput(noop.result_text(missing)), note)
    crlf = "\r\n" in text
    base = text.replace("\r\n", "\n") if crlf else text  # the model reads and writes \n lines
    asked = ""
    try:
        window = window_for(base, change, ctx.request)
        if len(window.text) > MAX_REWRITE_CHARS:
            raise RewriteRefused(f"the part of {rel} to rewrite is {len(window.text):,} characters, more than the "
                                 "model can write back; send old_string (the exact text) and new_string instead")
        asked = instruction(rel, path, window, change, ctx.request)
        written = extract(await ctx.rewrite(asked), window.text)
    except RewriteRefused as exc:
        raise ToolFailure(f"this edit was not made: {exc}. Nothing was changed; call edit_file again with the "
                          "change said more precisely (name the line or value).") from None
    new_text, kept = _new_text(base, window, written, change, ctx.request, path)
    if new_text == base:  # it wrote the text back as it was (the stub it was shown last): once more, sampling
        with contextlib.suppress(RewriteRefused):
            again = extract(await ctx.rewrite(asked + UNCHANGED, temperature=RESAMPLE_TEMPERATURE), window.text)
            new_text, kept = _new_text(base, window, again, change, ctx.request, path)
    new_text = new_text.replace("\n", "\r\n") if crlf else new_text
    if new_text == text:
        raise ToolFailure(f"this edit was not made: the rewritten {rel} is the same as before, so nothing changed. "
                          "Say the change more precisely (the exact name, value or line).")
    broken = breaks_python(path, text, new_text)
    if broken:
        raise ToolFailure(f"this edit was not made: the rewritten {rel} would not parse ({broken}); nothing was "
                          "changed. Call edit_file again with the change said more precisely.")
    lost = lost_names(path, text, new_text, ctx.request)
    if lost:
        raise ToolFailure(f"this edit was not made: {lost}. Nothing was changed; call edit_file again.")
    hollow = still_stubs(path, text, new_text, ctx.request)
    if hollow:
        raise ToolFailure(f"this edit was not made: {hollow}. Nothing was changed; call edit_file again.")
    out = await write_checked(ctx, path, text, new_text, "Edited")
    if kept and not out.is_error:
        out.text += "\n[" + "; ".join(kept) + "]"
    return with_note(out, note)
