"""A small model's change is checked against the tests that came with it (docs/loop.md §9.11).

On a change request of one file whose tests the pre-read found (``acronym_test.py`` beside ``acronym.py``:
loop/preread.py), once an edit of the file landed the agent runs those tests itself, as a ``terminal`` call
like the model's (the editor shows it, the approval policy and the OS sandbox apply), and when some fail it
makes the repair its own ``edit_file {path, change}``: the change names the failing tests, their lines and
their errors, and the rewrite sees the run's whole output above it (a repair that comes back unchanged is
followed by a fresh attempt from the stub, and so is one whose run passed no more: loop/fresh_attempt.py). Then
the tests run again: at most ``MAX_RUNS`` runs a turn. A 1.5B model that wrote ``'PNG '`` for ``'PNG'`` reads
the assertion and fixes it; asked to answer instead, it said "implemented".

Python tests (``unittest`` for a file that uses it, else ``pytest``) and JavaScript tests written for Node's own
runner (``node --test``), only when the command may run
without a refusal (approval ``yolo``, an "always allow" for it, or a client that can ask: in ``agentls run``
the default ``auto-edit`` refuses commands unasked, so there is no check; ``--approval yolo`` has one), and
only while the output says how many tests ran (a missing pytest, a test file that does not parse: no repair,
never a guess). A run that ends failing is the turn's ``tests_failing`` (the footer, exit code 4, and a line
after the answer). The setting ``check_tests = false`` turns it off.

A repair can make things worse (a 1.5B model that fixes one assertion and breaks the import). The turn never
ends on a version the tests liked less than one they already saw: when the last run passed fewer tests than an
earlier one, the agent puts that earlier version back, as its own ``edit_file {path, old_string, new_string}``
of the lines that differ (``test_restore``; the editor shows it, it can be undone), and the turn reports that
version's run.
"""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath

import anyio

from .agent_round import agent_round, calls_of
from .fresh_attempt import did_not_land, fresh_attempt
from .parts import TurnParts
from .regular import read_regular
from .state import TurnState
from .test_output import TestRun, read_run
from ..permissions import command_key
from ..tools.venv import venv_env
from ..types import text_of

JS_SUFFIXES = frozenset({".js", ".mjs", ".cjs"})
MAX_RUNS = 5  # test runs a turn; each failing one but the last is followed by a repair or a fresh attempt
MAX_FRESH = 3  # fresh attempts from the stub a turn (loop/fresh_attempt.py)
MAX_LOAD_ERROR_CHARS = 300
TEST_TIMEOUT = 60.0  # seconds; an implementation that loops forever is killed and the repair says so
FAILING_NOTE = "\n\n[agentls: {test} still fails after the change: {summary}]"


def command_for(test: str, text: str, venv: bool) -> str | None:
    """The command that runs ``test`` (relative to the workspace root) from the root: unittest's runner for a
    file written for it (no pytest needed), else pytest; ``-B`` leaves no ``__pycache__`` behind. A JavaScript
    test written for Node's own runner (``node:test``) runs with ``node --test``; one for Jest or Vitest, whose
    runner may not be installed, is not run (None)."""
    quoted = shlex.quote(test)
    if PurePosixPath(test).suffix in JS_SUFFIXES:
        return f"node --test --test-reporter=tap {quoted}" if "node:test" in text else None
    python = "python" if venv else "python3"
    if "unittest" in text and "import pytest" not in text and "from pytest" not in text:
        return f"{python} -B -m unittest {quoted}"
    return f"{python} -B -m pytest -q --tb=short -p no:cacheprovider {quoted}"


def _may_run(parts: TurnParts, command: str) -> bool:
    policy = parts.tools.policy
    decision = policy.decide("execute", command_key(command), False)
    if decision == "allow":
        return True
    if decision == "deny" or policy.mode == "plan":
        return False
    return bool(getattr(parts.host, "can_ask", True)) or policy.unattended("execute", False) == "allow"


def repair_request(target: str, test: str, run: TestRun, timed_out: bool) -> str:
    if timed_out:
        return (f"Fix {target}: running {test} did not finish within {TEST_TIMEOUT:g} s, so the code probably "
                "loops forever or is far too slow. Make it finish, and keep it correct.")
    lines = "\n".join(f"- {f}" for f in run.failures)
    return (f"The tests in {test} fail as shown above ({run.summary()}):\n{lines}\nThe tests are correct, don't "
            f"change them. Fix the code in {target} to resolve the errors.")


async def check_tests(parts: TurnParts, turn: TurnState) -> None:
    """After the first edit and after each tool round: run the tests if an edit of the target landed since
    the last run, and repair what fails."""
    found = _test_of(parts, turn)
    if found is None:
        return
    target, test = found
    await _after_unlanded_first_edit(parts, turn, target, test)
    await _run_and_repair(parts, turn, target, test)
    await _keep_best(parts, turn, target)


async def _after_unlanded_first_edit(parts: TurnParts, turn: TurnState, target: str, test: str) -> None:
    """A first edit that did not land (the stub written back; a retry's "fix the code" that rewrote the file as it
    was, renamed a function, or was refused as naming nothing in a long file): the tests run on the file as it
    is, and when they fail, fresh attempts (loop/fresh_attempt.py)."""
    state, messages = turn.tests, parts.conversation.messages
    if state.runs or turn.outcome.written(parts.conversation.root / target) is not None or \
            not did_not_land(messages, "first_edit"):
        return
    current = await anyio.to_thread.run_sync(read_regular, parts.conversation.root, target)
    result = await _run_once(parts, turn, target, test, current) if current is not None else None
    if result is not None and not result[1] and state.runs < MAX_RUNS:
        await _fresh(parts, turn, target, test, result[0], current or "")


async def _run_and_repair(parts: TurnParts, turn: TurnState, target: str, test: str) -> None:
    """Run, then repair a version that passed more than any before it; a version that did not (or a repair that
    did not land) is followed by a fresh attempt from the stub while the turn has one left."""
    root, state = parts.conversation.root, turn.tests
    while state.runs < MAX_RUNS and not turn.outcome.tools_stopped:
        written = turn.outcome.written(root / target)
        if written is None or written == state.checked:
            return  # no landed edit since the last run
        before = state.best
        result = await _run_once(parts, turn, target, test, written)
        if result is None or state.runs >= MAX_RUNS:
            return
        run, timed_out = result
        if parts.control.steer_pending:  # the user said something: no repair, the model reads it next with this run
            return  # before it (loop/rounds.py); a steer stops the fresh attempts too (``_fresh``)
        improved = before is None or (state.best is not None and state.best[:2] > before[:2])
        if not improved and await _fresh(parts, turn, target, test, run, written):
            continue  # a new version landed: its run is next
        await agent_round(parts, turn, calls_of("edit_file", [
            {"path": target, "change": repair_request(target, test, run, timed_out)}], "test_repair"),
            {"test_repair": True})
        if did_not_land(parts.conversation.messages, "test_repair"):
            await _fresh(parts, turn, target, test, run, written)


async def _fresh(parts: TurnParts, turn: TurnState, target: str, test: str, run: TestRun, current: str) -> bool:
    """Fresh attempts (loop/fresh_attempt.py) until one lands, at most ``MAX_FRESH`` a turn: independent samples
    of the same question, so llama.cpp's prompt cache holds all of it but the failures."""
    state = turn.tests
    while state.fresh < MAX_FRESH and not turn.outcome.tools_stopped and not parts.control.steer_pending:
        state.fresh += 1
        if await fresh_attempt(parts, turn, target, test, run, current):
            return True
    return False


async def _run_once(parts: TurnParts, turn: TurnState, target: str, test: str,
                    version: str) -> tuple[TestRun, bool] | None:
    """Run the tests on ``version`` (the target's text now): the failing run and whether it timed out, or None
    (no run: not allowed, no test file; or it passed, or its output says nothing)."""
    root, state = parts.conversation.root, turn.tests
    text = await anyio.to_thread.run_sync(read_regular, root, test)
    if text is None:
        return None
    command = command_for(test, text, await venv_env(root) is not None)
    if command is None or not _may_run(parts, command):
        return None
    state.checked = version
    state.runs += 1
    result = await _run(parts, turn, command)
    if result is None or (result[0].passed and not result[1]):
        state.failing, state.passed = None, result is not None
        return None
    state.passed = False
    run, timed_out = result
    state.failing = f"{test} ({'timed out' if timed_out else run.summary()})"
    passed = 0 if timed_out else run.ran - run.failed
    if state.best is None or (passed, -run.failed) >= state.best[:2]:  # a tie: the later one
        state.best = (passed, -run.failed, version, state.failing)
    return result


def restore_edit(current: str, best: str) -> dict[str, str]:
    """``edit_file``'s old and new strings that turn ``current`` into ``best``: the whole lines from the first
    that differs to the last, when they occur once in ``current``; else the whole file."""
    old, new = current.splitlines(keepends=True), best.splitlines(keepends=True)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old_part, new_part = "".join(old[head:len(old) - tail]), "".join(new[head:len(new) - tail])
    if not old_part.strip() or current.count(old_part) != 1:
        return {"old_string": current, "new_string": best}
    return {"old_string": old_part, "new_string": new_part}


async def _keep_best(parts: TurnParts, turn: TurnState, target: str) -> None:
    """Put back the version whose run passed most, when the last run passed fewer (and nothing else edited the
    file since: the last run saw what is there)."""
    state, path = turn.tests, parts.conversation.root / target
    best, current = state.best, turn.outcome.written(path)
    if best is None or state.failing is None or current is None or current != state.checked or \
            best[2] == current or turn.outcome.tools_stopped:
        return
    await agent_round(parts, turn, calls_of("edit_file", [{"path": target, **restore_edit(current, best[2])}],
                                            "test_restore"), {"test_restore": True})
    if turn.outcome.written(path) == best[2]:
        state.checked, state.failing = best[2], best[3]


def _test_of(parts: TurnParts, turn: TurnState) -> tuple[str, str] | None:
    if not parts.profile.check_tests or turn.change is None or len(turn.change_targets) != 1 or \
            "terminal" not in parts.registry.names or "edit_file" not in parts.registry.names:
        return None
    target, test = turn.change_targets[0], turn.target_tests
    if test is None:
        return None
    kinds = {PurePosixPath(test).suffix, PurePosixPath(target).suffix}
    if not (kinds == {".py"} or kinds <= JS_SUFFIXES):
        return None
    return target, test


async def _run(parts: TurnParts, turn: TurnState, command: str) -> tuple[TestRun, bool] | None:
    """The run's reading (and whether it timed out), or None when the output does not say."""
    await agent_round(parts, turn, calls_of("terminal", [{"command": command, "timeout": TEST_TIMEOUT}],
                                            "test_check"), {"test_check": True})
    result = parts.conversation.messages[-1]
    if result.get("role") != "tool" or result.get("name") != "terminal":
        return None
    output = text_of(result)
    status = output.split("\n", 2)[1] if "\n" in output else ""
    if "timed out after" in status:
        return TestRun(0, 1, (f"the run did not finish within {TEST_TIMEOUT:g} s",)), True
    run = read_run(output)
    turn.tests.summarized = turn.tests.summarized or run is not None
    if run is None and turn.tests.summarized and status.startswith("[exit code") and status != "[exit code 0]":
        # The same command gave a summary earlier this turn: the change broke the tests' loading. A failing run
        # that passed nothing (named by its last line), never "passed".
        last = next((x.strip() for x in reversed(output.splitlines()) if x.strip()), "no output")
        return TestRun(0, 1, (f"the tests did not run: {last[:MAX_LOAD_ERROR_CHARS]}",)), False
    return (run, False) if run is not None else None


def failing_note(turn: TurnState) -> str | None:
    """The line after the answer when the last run of the tests failed."""
    summary = turn.tests.failing_summary()
    return None if summary is None else FAILING_NOTE.format(test=turn.target_tests, summary=summary)
