"""A small model asked for a change makes one (docs/loop.md §9.10).

Told "Implement the stub in acronym.py so that it satisfies INSTRUCTIONS.md", a 1.5B model with both files in
front of it answers "the stub is already implemented" and changes nothing. So for a small model a request
whose sentence starts with a change verb (implement, fix, add, change, complete, ...) is a *change request*:

- its *targets* are the files that sentence names, less those named as context ("satisfies
  INSTRUCTIONS.md", "per spec.md"); the context files are pre-read with them (loop/preread.py);
- while no edit of a target has landed, the first step may only be ``edit_file`` of a target (tool_mode
  json: the grammar admits nothing else), then any tool but no answer (``tool_choice = "required"``);
- an answer in words before any edit was attempted is not taken: the model gets one nudge naming the file,
  riding a user message, and the turn goes on;
- a turn that changed no file ends with ``TurnResult.unmade_change`` set (the files asked for), so
  ``agentls run`` exits 4 and the footer and the editors' end of turn say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from typing import TYPE_CHECKING

from ..outcome import EDIT_TOOLS
from ..types import Message

if TYPE_CHECKING:
    from .parts import TurnParts
    from .state import TurnState

_VERBS = (r"implement|fix|add|change|complete|finish|edit|update|set|rename|remove|delete|replace|rewrite|write|"
          r"create|make|insert|append|refactor|convert|correct|modify|move|solve|put|include|translate|improve")
_LEAD = re.compile(r"^\s*(?:(?:in|inside|within|for)\s+[\w./-]+\s*,\s*)?(?:(?:please|now|then|and|so)[,\s]+)*"
                   r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
                   rf"(?:{_VERBS})(?:s|es|ed|d)?\b", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_FILE = re.compile(r"[\w][\w./-]*\.[A-Za-z0-9]+")
_CONTEXT = re.compile(r"\b(?:satisf\w*|per|according to|following|described in|see|using|like|match\w*|"
                      r"based on|as in|as described in|explained in|specified in|follows?)\s+(?:the\s+)?$",
                      re.IGNORECASE)
NUDGE = ("(You answered without changing {files}, but the user asked for a change. Do not answer yet: call "
         "{tool} on {first} with the change; its code is written in the next step.)")


@dataclass(frozen=True)
class ChangeRequest:
    targets: tuple[str, ...]  # the files to change, as the request names them (may not exist yet)
    context: tuple[str, ...]  # files named as what the change must satisfy
    sentences: tuple[str, ...] = ()  # the request's sentences that ask for the change, as written


def change_request(text: str) -> ChangeRequest | None:
    """The request's change, when one of its sentences starts with a change verb; else None."""
    targets: list[str] = []
    context: list[str] = []
    asked: list[str] = []
    for sentence in _SENTENCES.split(text):
        if not _LEAD.match(sentence):
            continue
        asked.append(sentence.strip())
        for m in _FILE.finditer(sentence):
            name = m.group(0).rstrip(".").removeprefix("./")
            bucket = context if _CONTEXT.search(sentence[:m.start()]) else targets
            if name not in targets and name not in context:
                bucket.append(name)
    return ChangeRequest(tuple(targets), tuple(context), tuple(asked)) if asked else None


def edits_since(messages: list[Message], start: int) -> tuple[int, int]:
    """(edit results, failed edit results) among ``messages[start:]``."""
    edits = [m for m in messages[start:] if m.get("role") == "tool" and m.get("name") in EDIT_TOOLS]
    return len(edits), sum(1 for m in edits if (m.get("meta") or {}).get("error"))


def nudge_for(parts: TurnParts, turn: TurnState) -> str | None:
    """The one nudge for an answer in words to a change request before any edit was attempted, else None."""
    change = turn.change
    if change is None or turn.change_nudged or turn.outcome.tools_stopped or not parts.profile.must_act:
        return None
    if edits_since(parts.conversation.messages, parts.conversation.turn_user or 0)[0]:
        return None
    turn.change_nudged = True
    named = turn.change_targets or change.targets
    exists = bool(turn.change_targets)
    return NUDGE.format(files=", ".join(named) or "any file", first=named[0] if named else "the file to change",
                        tool="edit_file" if exists or not named else "write_file")


UNMADE_NOTE = "\n\n[agentls: no file was changed; the change asked for in {files} was not made]"


def unmade_note(parts: TurnParts, turn: TurnState, changed: bool) -> str | None:
    """For a small model's answer to a change request that changed no file: the line that says so, after its
    words (it answered "The stub in dnd_character.py is now implemented" after three failed edits)."""
    files = unmade(turn, changed)
    return UNMADE_NOTE.format(files=files) if files and parts.profile.must_act else None


def unmade(turn: TurnState, changed: bool) -> str | None:
    """For the turn's result: the files a change request asked for when the turn changed none."""
    if turn.change is None or changed:
        return None
    return ", ".join(turn.change_targets or turn.change.targets) or "(no file named)"
