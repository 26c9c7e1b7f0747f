"""A fresh attempt when a test repair came back unchanged or passed no more (docs/loop.md §9.11).

Asked to repair code it wrote, a 1.5B model that does not see the fault writes the same code back, at
temperature 0 and again when sampled: it copies the file it was shown last. That happens to the agent's repair
after a failing run, and to a retry turn's first edit ("the tests fail as shown above; fix the code": the
agent then runs the tests on the file as it is first), and to a repair that made the file no better. Up to
three times a turn (loop/test_check.py), the agent then asks for the file anew instead, shown as it was when
the conversation first read it (the stub), with the tests that failed listed and the instructions and tests
as the first edit saw them (loop/focused.py), sampled. The reply gets the described edit's guards (it parses,
keeps the stub's names and signatures, is no stub, has its imports) and lands as the agent's own ``edit_file {path, old_string, new_string}`` of the whole file
(``meta.test_repair`` and ``meta.fresh``); then the tests run again, and the best run's version is what the turn
keeps (loop/test_check.py).
"""

from __future__ import annotations

import logging
from pathlib import Path, PurePosixPath

from .agent_round import agent_round, calls_of
from .focused import focused_prompt, preread_results, request_text, shown_files, shown_text
from .parts import TurnParts
from .save import save
from .state import TurnState
from .test_output import TestRun
from ..providers.errors import ProviderError
from ..tools.described import MAX_REWRITE_CHARS, RewriteRefused, extract
from ..tools.fences import LANG, fence_for
from ..tools.guards import breaks_python
from ..tools.imports import with_imports
from ..tools.keep_names import lost_names
from ..tools.stubs import still_stubs
from ..types import Message, text_of

log = logging.getLogger("agentls.loop")
FRESH_TEMPERATURE = 0.7


def did_not_land(messages: list[Message], kind: str) -> bool:
    """The last step was the agent's own edit of ``kind`` and it was refused (came back unchanged, renamed a
    function, named nothing in a long file: any ``error``)."""
    if len(messages) < 2:
        return False
    call, result = messages[-2], messages[-1]
    return bool((call.get("meta") or {}).get(kind)) and result.get("role") == "tool" and \
        text_of(result).startswith("error")


def first_read(messages: list[Message], target: str) -> str | None:
    """The target as the conversation's first pre-read showed it (read_file's line numbers taken off)."""
    result = next((r for path, r in preread_results(messages) if path == target), None)
    return shown_text(result) if result is not None else None


def instruction(target: str, start: str, test: str, run: TestRun) -> str:
    fence, lang = fence_for(start), LANG.get(PurePosixPath(target).suffix, "")
    failures = "\n".join(f"- {f}" for f in run.failures)
    return (f"{target} as it was at the start:\n{fence}{lang}\n{start.rstrip()}\n{fence}\n"
            f"An implementation of it failed these tests of {test} ({run.summary()}):\n{failures}\n"
            f"Write {target} anew so that every test passes, with a different approach where the failures show a "
            "wrong one. Keep every function and class of the file above, with the same names and parameters. "
            f"Reply with the whole new {target} in one {fence}{lang} code block only: no JSON, no tool call.")


async def fresh_attempt(parts: TurnParts, turn: TurnState, target: str, test: str, run: TestRun,
                        current: str) -> bool:
    """Ask for the file anew and land it over ``current`` (its text now); False when there is nothing to ask
    from or the reply is unusable."""
    path = parts.conversation.root / target
    start = first_read(parts.conversation.messages, target)
    if start is None or len(start) > MAX_REWRITE_CHARS:
        return False  # nothing to ask from, or more than the model can write back whole
    prompt = focused_prompt(parts, instruction(target, start, test, run), FRESH_TEMPERATURE, await shown_files(parts))
    await save(parts, turn)  # before every provider call
    try:
        response = await parts.caller.call(lambda: prompt, turn.calls, purpose="rewrite", stream_to_user=False)
        new = extract(text_of(response.message), current)
    except (ProviderError, RewriteRefused) as exc:
        log.info("fresh attempt at %s: no usable reply (%s)", target, exc)
        return False
    new, _ = with_imports(new)
    if not new.endswith("\n"):
        new += "\n"
    refused = "the same code" if new == current else _refused(path, start, current, new, request_text(parts))
    if refused:
        log.info("fresh attempt at %s: not written (%s)", target, refused)
        return False
    await agent_round(parts, turn, calls_of("edit_file", [{"path": target, "old_string": current, "new_string": new}],
                                            "test_fresh"), {"test_repair": True, "fresh": True})
    return turn.outcome.written(path) == new


def _refused(path: Path, start: str, current: str, new: str, request: str) -> str | None:
    """Why the reply may not be written (the described edit's guards), else None."""
    return breaks_python(path, current, new) or lost_names(path, start, new, request) or \
        still_stubs(path, start, new, request)
