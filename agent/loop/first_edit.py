"""A small model's first step on a change request of one file is the agent's own ``edit_file`` of it.

Forced to make its first step an edit of the named file (loop/change_request.py), a 1.5B model still chose
what the edit says, and wrote it as code inside a JSON string ("change": "def line_up(name, number):\n
return f'...th...'"); the rewrite that writes the file then copied that draft. The same model asked once,
with the instructions, the stub and the tests, for the whole file in a code block does better. So when a
change request names one file to change, the workspace has it, and it was pre-read, the turn's first
model-facing step is made by the agent: ``edit_file {path, change}`` with ``change`` the request's own
sentences asking for it, or the whole request when those do not name the file ("In calc.py, sub returns
a + b. Fix it so that it returns a - b.") (``meta.first_edit``). Its rewrite is the model's call that writes the file, with
the instructions and the tests in front of it; every guard of a described edit applies (names kept, Python
that parses, honest no-ops). A landed edit ends the tools (the next step answers); a refused one is the
model's to retry, as after any failed edit.

Not in plan mode (edits do not run there), not when the request names more than one file to change, and
not for a file the request asks to create. The setting ``first_edit = false`` leaves the first edit to the
model.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from .agent_round import agent_round, calls_of
from .parts import TurnParts
from .focused import request_text
from .state import TurnState

MAX_CHANGE_CHARS = 600  # the sentences asking for the change; the whole request rides the rewrite's prompt


async def first_edit(parts: TurnParts, turn: TurnState) -> None:
    change = turn.change
    profile = parts.profile
    if change is None or not (profile.first_edit and profile.described_edits and profile.preread):
        return
    if len(change.targets) > 1 or len(turn.change_targets) != 1 or "edit_file" not in parts.registry.names:
        return
    if parts.tools.policy.mode == "plan":
        return
    target = turn.change_targets[0]
    words = " ".join(change.sentences)
    if PurePosixPath(target).name not in words:  # "In calc.py, sub returns a + b. Fix it so that ...": all of it
        words = request_text(parts)
    words = words[:MAX_CHANGE_CHARS].strip()
    if not words:
        return
    await agent_round(parts, turn, calls_of("edit_file", [{"path": target, "change": words}], "first_edit"),
                      {"first_edit": True})
