"""The answer after the agent's own edits, asked plainly (docs/loop.md §9.11).

On a small model's change request of one file the agent pre-reads, makes the first edit, runs the tests and
repairs (loop/first_edit.py, loop/test_check.py): by the time the model answers it has not been called on the
transcript at all this turn, and the answer is its only step, without tools. Asked on the transcript, that step
processed every pre-read file, diff and test run the model had never seen (4,000 prompt tokens and more: 60-80 s
on 2 cores), after a compression of the same transcript when it had passed half the window, to write two
sentences. It is asked instead as one plain message: the request, the change as one diff from the file as the
turn found it, and what the last test run said. The answer joins the transcript like any other.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from .focused import request_text
from .parts import TurnParts
from .state import TurnState
from ..model_caller import Prompt
from ..tools.fences import fence_for
from ..truncate import cap_text

SYSTEM = "You are a coding assistant in the user's editor. You made the change already; now tell the user, briefly."
AGENT_STEPS = ("preread", "first_edit", "test_check", "test_repair", "test_restore", "fresh")
MAX_REQUEST_CHARS = 2000
MAX_DIFF_CHARS = 3000


def is_plain(parts: TurnParts, turn: TurnState) -> bool:
    """The next step is the answer after the agent's own edits: a small model's change request whose named files
    all changed, every step of the turn so far the agent's own, nothing said to the model since the request (a
    steer), and the last message a tool result."""
    conversation = parts.conversation
    messages, start = conversation.messages, conversation.turn_user
    if not parts.profile.first_edit or start is None or not turn.change_targets or not turn.named_files or \
            not set(turn.named_files) <= turn.outcome.applied() or not messages or messages[-1].get("role") != "tool":
        return False
    for m in messages[start + 1:]:
        if m.get("role") == "user":
            return False
        meta = m.get("meta") or {}
        if m.get("role") == "assistant" and not any(meta.get(k) for k in AGENT_STEPS):
            return False
    return True


def _diff(root: Path, path: Path, before: str | None, after: str | None) -> str:
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = path.name
    lines = difflib.unified_diff((before or "").splitlines(), (after or "").splitlines(), f"a/{rel}", f"b/{rel}",
                                 lineterm="")
    return "\n".join(lines)


def tests_line(turn: TurnState) -> tuple[str, str]:
    """What the last test run said, and what the answer must say of it ("" when there was no readable run)."""
    test = turn.target_tests or "the tests"
    summary = turn.tests.failing_summary()
    if summary is not None:
        return (f"agentls then ran {test}: the tests still fail ({summary}).",
                ", and that these tests still fail. Do not say that they pass")
    if turn.tests.passed:
        return f"agentls then ran {test}: the tests pass.", ", and that the tests pass"
    return "", ""


def prompt(parts: TurnParts, turn: TurnState) -> Prompt:
    """The answer's question: the request, the turn's change as one diff per file, the last test run."""
    root, outcome = parts.conversation.root, turn.outcome
    request = cap_text(request_text(parts).strip(), MAX_REQUEST_CHARS)[0]
    changed = [p for p in sorted(outcome.applied()) if outcome.before(p) != outcome.written(p)]
    diffs = cap_text("\n".join(_diff(root, p, outcome.before(p), outcome.written(p)) for p in changed),
                     MAX_DIFF_CHARS)[0]
    ran, say = tests_line(turn)
    targets = ", ".join(turn.change_targets)
    if changed:
        did = f"You changed {targets}:\n{fence_for(diffs)}diff\n{diffs}\n{fence_for(diffs)}"
        ask = f"say what you changed in {targets}{say}"
    else:  # every version written was taken back (the best run was the file as it was): nothing to describe
        did = f"Your changes to {targets} were not kept: the file is as it was before."
        ask = f"say that {targets} is unchanged{say}"
    text = "\n\n".join(x for x in (
        f"The user asked:\n{fence_for(request)}\n{request}\n{fence_for(request)}", did, ran,
        f"Answer the user in one to three sentences of plain text: {ask}.") if x)
    return Prompt(system=SYSTEM, messages=[{"role": "user", "content": text}], tools=(), tool_choice="text",
                  transcript=False)
