"""Issue 27: a small model's change is checked against the tests beside it, and what fails is repaired
(agent/loop/test_check.py, agent/loop/focused.py). The scripted provider plays the model; the tests are real
unittest files run by a real python3, through the terminal tool and the OS sandbox."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.agent.footer import footer, summary_json
from agentls.agent.loop import test_check
from agentls.agent.loop.test_output import read_run
from agentls.agent.scripted import Reply, ScriptedServer, text
from agentls.server.run import exit_code

from .conftest import AgentFactory

STUB = "def abbreviate(words):\n    pass\n"
WRONG = "def abbreviate(words):\n    return ''.join(w[0] for w in words.split()) + ' '\n"
DONE = "def abbreviate(words):\n    return ''.join(w[0].upper() for w in words.replace('-', ' ').split())\n"
LOOPS = "def abbreviate(words):\n    while True:\n        pass\n"
TESTS = '''import unittest

from acronym import abbreviate


class AcronymTest(unittest.TestCase):
    def test_basic(self):
        self.assertEqual(abbreviate("Portable Network Graphics"), "PNG")

    def test_hyphen(self):
        self.assertEqual(abbreviate("Liquid-crystal display"), "LCD")
'''
ASK = ("Implement the stub in acronym.py so that it satisfies INSTRUCTIONS.md. Keep the function and class names. "
       "Use only the standard library.")


def j(name: str, **arguments: Any) -> Reply:
    return text(json.dumps({"name": name, "arguments": arguments}))


def block(body: str) -> Reply:
    return text(f"```python\n{body}```")


def agent_steps(messages: list[dict[str, Any]]) -> list[str]:
    return [next(iter(m["meta"])) for m in messages if m.get("role") == "assistant" and m.get("tool_calls")
            and set(m.get("meta") or {}) & {"preread", "first_edit", "test_check", "test_repair", "test_restore"}]


def acronym_exercise(workspace: Path) -> Path:
    (workspace / "acronym.py").write_text(STUB)
    (workspace / "INSTRUCTIONS.md").write_text("# Instructions\n\nPortable Network Graphics -> PNG.\n")
    (workspace / "acronym_test.py").write_text(TESTS)
    return workspace


@pytest.fixture
def exercise(workspace: Path) -> Path:
    return acronym_exercise(workspace)


async def test_a_failing_first_edit_is_repaired_from_the_failures_and_checked_again(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(block(WRONG), block(DONE), text("Implemented abbreviate; the tests pass."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    assert agent_steps(result.messages) == ["preread", "first_edit", "test_check", "test_repair", "test_check"]
    runs = [m for m in result.messages if m.get("role") == "tool" and m.get("name") == "terminal"]
    assert runs[0]["content"].startswith("$ python3 -B -m unittest acronym_test.py\n[exit code 1]")
    assert runs[1]["content"].startswith("$ python3 -B -m unittest acronym_test.py\n[exit code 0]")
    repair = srv.requests[1].body  # the repair's rewrite: one plain message, the failures and the file
    assert len(repair["messages"]) == 2 and repair["messages"][0]["role"] == "system" and "tools" not in repair
    ask = repair["messages"][1]["content"]
    assert "AssertionError: 'PNG ' != 'PNG'" in ask and "The tests are correct, don't change them." in ask
    assert ask.index("The tests were run:") < ask.index("acronym.py (the whole file) now:") < ask.index(WRONG)
    assert ask.endswith("no JSON, no tool call.") and "     1\t" not in ask  # read_file's numbers are gone
    assert result.tests_failing is None and "tests still failing" not in footer(result)
    assert not (exercise / "__pycache__").exists()  # -B: the check leaves nothing behind
    # checked and passing: the model answers, asked plainly (loop/plain_answer.py): the request, the turn's change as
    # one diff from the stub, the last run; no tools, no transcript (none of its reads, runs or repairs)
    final_step = srv.requests[-1].body
    assert "tools" not in final_step and "response_format" not in final_step and len(final_step["messages"]) == 2
    asked = final_step["messages"][1]["content"]
    assert asked.startswith(f"The user asked:\n```\n{ASK}\n```") and "import unittest" not in asked
    assert "-    pass\n+    return ''.join(w[0].upper()" in asked and "+ ' '" not in asked  # stub to DONE, not via WRONG
    assert "agentls then ran acronym_test.py: the tests pass." in asked and asked.endswith(
        "say what you changed in acronym.py, and that the tests pass.")
    assert "agentls then ran" not in json.dumps(result.messages)  # told, not kept
    assert result.final_response == "Implemented abbreviate; the tests pass." == result.messages[-1]["content"]
    assert result.messages[-2]["role"] == "tool" and result.api_calls == 3  # the first edit, the repair, the answer


async def test_the_first_edit_s_rewrite_is_one_plain_message_with_the_instructions_and_the_tests(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(block(DONE), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert exit_code(result) == 0 and agent_steps(result.messages) == ["preread", "first_edit", "test_check"]
    ask = srv.requests[0].body["messages"][1]["content"]
    assert ask.startswith("INSTRUCTIONS.md:\n```markdown\n# Instructions")
    assert "acronym_test.py:\n```python\nimport unittest" in ask and "The tests were run" not in ask
    assert ask.count("def abbreviate(words):\n    pass") == 1  # the stub once: in the instruction, last


async def test_tests_that_still_fail_after_the_repairs_exit_4_with_the_line_that_says_so(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    # the first edit, its repair (as bad), then the fresh attempts (as bad), each run
    srv.push(block(WRONG), *(block(WRONG.replace("+ ' '", f"+ '{c}'")) for c in "!?%#"),
             text("Implemented; the tests pass."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert agent_steps(result.messages).count("test_check") == test_check.MAX_RUNS
    assert agent_steps(result.messages).count("test_repair") == test_check.MAX_RUNS - 1
    assert sum(bool((m.get("meta") or {}).get("fresh")) for m in result.messages) == test_check.MAX_FRESH
    told = srv.requests[-1].body["messages"][-1]["content"]  # a 1.5B model wrote "the tests now pass" here
    assert "agentls then ran acronym_test.py: the tests still fail (2 of 2 tests failed)." in told
    assert told.endswith("and that these tests still fail. Do not say that they pass.")
    assert result.tests_failing == "acronym_test.py (2 of 2 tests failed)" and exit_code(result) == 4
    note = "\n\n[agentls: acronym_test.py still fails after the change: 2 of 2 tests failed]"
    assert result.final_response.endswith(note) and result.messages[-1]["content"].endswith(note)
    assert "tests still failing: acronym_test.py (2 of 2 tests failed)" in footer(result)
    assert summary_json(result)["testsFailing"] == "acronym_test.py (2 of 2 tests failed)"
    assert result.to_json()["tests_failing"] == "acronym_test.py (2 of 2 tests failed)"


async def test_a_repair_that_changes_nothing_ends_the_check_and_the_model_answers(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(*[block(WRONG)] * (3 + test_check.MAX_FRESH), j("final_answer", text="I could not fix it."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert agent_steps(result.messages) == ["preread", "first_edit", "test_check", "test_repair"]
    assert result.tests_failing is not None and exit_code(result) == 4
    # first edit, the repair and its one resample, the fresh attempts (the same code again: none landed), then the
    # answer: no model copies
    assert len(srv.requests) == 4 + test_check.MAX_FRESH
    assert [r.body["temperature"] for r in srv.requests[3:-1]] == [0.7] * test_check.MAX_FRESH


async def test_code_that_never_finishes_is_killed_and_the_repair_says_so(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(test_check, "TEST_TIMEOUT", 3.0)
    srv.push(block(LOOPS), block(DONE), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    repair = next(m for m in result.messages if (m.get("meta") or {}).get("test_repair"))
    change = json.loads(repair["tool_calls"][0]["function"]["arguments"])["change"]
    assert "did not finish within 3 s" in change and "loops forever" in change


async def test_code_that_never_finishes_and_a_repair_that_changes_nothing_get_a_fresh_attempt_that_says_so(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(test_check, "TEST_TIMEOUT", 3.0)
    srv.push(block(LOOPS), block(LOOPS), block(LOOPS), block(DONE), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    fresh = srv.requests[3].body["messages"][1]["content"]
    assert srv.requests[3].body["temperature"] == 0.7 and "- the run did not finish within 3 s" in fresh


async def test_without_approval_for_commands_no_test_runs(make_agent: AgentFactory, srv: ScriptedServer,
                                                           exercise: Path) -> None:
    srv.push(block(WRONG), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="auto-edit").run_conversation(ASK)
    assert agent_steps(result.messages) == ["preread", "first_edit"]  # refused unasked: not even tried
    assert result.tests_failing is None and not result.refused and exit_code(result) == 0


async def test_check_tests_false_turns_it_off(make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(block(WRONG), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo",
                              check_tests=False).run_conversation(ASK)
    assert agent_steps(result.messages) == ["preread", "first_edit"]


async def test_the_model_s_own_landed_edit_is_checked_too(make_agent: AgentFactory, srv: ScriptedServer,
                                                           exercise: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(test_check, "MAX_FRESH", 0)  # after the first edit's reply without code: the model's step
    srv.push(text("no code here"), j("edit_file", path="acronym.py", change="implement abbreviate"), block(DONE),
             j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    # the first edit wrote nothing: the tests ran on the stub, then on the model's own edit
    assert agent_steps(result.messages) == ["preread", "first_edit", "test_check", "test_check"]
    assert result.messages[-2]["content"].startswith("$ python3 -B -m unittest acronym_test.py\n[exit code 0]")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
async def test_a_test_file_that_is_a_fifo_is_never_run(make_agent: AgentFactory, srv: ScriptedServer,
                                                        exercise: Path) -> None:
    (exercise / "acronym_test.py").unlink()
    os.mkfifo(exercise / "acronym_test.py")  # opening it would block the turn
    srv.push(block(WRONG), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert "test_check" not in agent_steps(result.messages) and exit_code(result) == 0


async def test_a_test_file_linked_out_of_the_workspace_is_never_run(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path, tmp_path: Path) -> None:
    outside = tmp_path / "evil_test.py"
    outside.write_text(TESTS)
    (exercise / "acronym_test.py").unlink()
    (exercise / "acronym_test.py").symlink_to(outside)
    srv.push(block(WRONG), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert "test_check" not in agent_steps(result.messages)


async def test_output_that_says_nothing_about_tests_gets_no_repair(make_agent: AgentFactory, srv: ScriptedServer,
                                                                    exercise: Path) -> None:
    (exercise / "acronym_test.py").write_text("import unittest\nthis is not python\n")
    srv.push(block(WRONG), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert agent_steps(result.messages) == ["preread", "first_edit", "test_check"]  # no guess, no repair
    assert result.tests_failing is None
    assert "agentls ran" not in json.dumps(srv.requests[-1].body["messages"])  # neither "pass" nor "fail"


UNITTEST_ERROR = """E
======================================================================
ERROR: acronym_test (unittest.loader._FailedTest.acronym_test)
----------------------------------------------------------------------
ImportError: Failed to import test module: acronym_test
Traceback (most recent call last):
  File "/w/acronym_test.py", line 3, in <module>
    from acronym import abbreviate
ImportError: cannot import name 'abbreviate' from 'acronym' (/w/acronym.py)


----------------------------------------------------------------------
Ran 1 test in 0.000s

FAILED (errors=1)
"""
PYTEST_MIXED = """F.
=================================== FAILURES ===================================
__________________________________ test_basic __________________________________
acronym_test.py:4: in test_basic
    assert abbreviate("Portable Network Graphics") == "PNG"
E   AssertionError: assert 'PNG ' == 'PNG'
=========================== short test summary info ============================
FAILED acronym_test.py::test_basic - AssertionError: assert 'PNG ' == 'PNG'
1 failed, 1 passed in 0.02s
"""


@pytest.mark.parametrize(("output", "ran", "failed", "first"), [
    (UNITTEST_ERROR, 1, 1, "acronym_test: from acronym import abbreviate: ImportError: cannot import name 'abbreviate' "
                     "from 'acronym' (/w/acronym.py)"),
    (PYTEST_MIXED, 2, 1, "test_basic: assert abbreviate(\"Portable Network Graphics\") == \"PNG\": "
                         "AssertionError: assert 'PNG ' == 'PNG'"),
    ("...\n----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\nOK\n",
     3, 0, None),
])
def test_runs_are_read_from_unittest_and_pytest_summaries(output: str, ran: int, failed: int,
                                                          first: str | None) -> None:
    run = read_run(output)
    assert run is not None and (run.ran, run.failed) == (ran, failed)
    assert (run.failures[0] if run.failures else None) == first


@pytest.mark.parametrize("output", ["/usr/bin/python3: No module named pytest\n", "", "Ran out of time\n"])
def test_output_without_a_summary_is_not_read(output: str) -> None:
    assert read_run(output) is None


async def test_after_a_repair_that_changed_nothing_the_model_may_only_answer(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(*[block(WRONG)] * (3 + test_check.MAX_FRESH), text("I could not fix it."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    step = srv.requests[-1].body  # no tools to copy the agent's edit with, which the model does word for word
    assert "tools" not in step and "response_format" not in step and len(step["messages"]) == 2
    assert "still fail (2 of 2 tests failed)" in step["messages"][1]["content"]
    assert result.final_response.startswith("I could not fix it.")


@pytest.mark.parametrize(("test", "text", "venv", "command"), [
    ("acronym_test.py", TESTS, False, "python3 -B -m unittest acronym_test.py"),
    ("tests/test_calc.py", "import pytest\n\ndef test_add():\n    assert 1\n", False,
     "python3 -B -m pytest -q --tb=short -p no:cacheprovider tests/test_calc.py"),
    ("test_calc.py", "import unittest\nimport pytest\n", True,
     "python -B -m pytest -q --tb=short -p no:cacheprovider test_calc.py"),  # pytest-only features: pytest
    ("a;touch pwned_test.py", TESTS, False, "python3 -B -m unittest 'a;touch pwned_test.py'"),  # quoted
])
def test_the_command_fits_the_test_file(test: str, text: str, venv: bool, command: str) -> None:
    assert test_check.command_for(test, text, venv) == command


async def test_the_retry_turn_s_repair_sees_the_first_turn_s_files_and_the_whole_pasted_output(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    agent = make_agent(small_model=True, tool_mode="json")  # auto-edit: no test run, the user runs them
    srv.push(block(WRONG), j("final_answer", text="Done."))
    await agent.run_conversation(ASK)
    output = "F\n" + "".join(f"line {i} of the output: AssertionError: 'PNG ' != 'PNG'\n" for i in range(60))
    srv.push(block(DONE), j("final_answer", text="Fixed."))
    result = await agent.run_conversation(
        f"{output}\nThe tests in acronym_test.py fail as shown above. The tests are correct, don't change them. "
        "Fix the code in acronym.py to resolve the errors.")
    assert (exercise / "acronym.py").read_text() == DONE
    ask = srv.requests[2].body["messages"][1]["content"]
    assert "INSTRUCTIONS.md:\n" in ask and "acronym_test.py:\n```python\nimport unittest" in ask
    assert "line 59 of the output" in ask  # past the instruction's 1,200 characters of the request
    assert ask.index("The user's message:") < ask.index("acronym.py (the whole file) now:") and exit_code(result) == 0


async def test_a_model_that_copies_the_agent_s_failed_first_edit_is_stopped_one_copy_sooner(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    first = {"path": "acronym.py", "change": "Implement the stub in acronym.py so that it satisfies INSTRUCTIONS.md."}
    copy = [j("edit_file", **first)] * 3  # the step and both its resamples (loop/resample.py) copy it
    # the first edit and its resample, the fresh attempts after the tests ran on the stub (the stub again: none
    # landed), the model's first copy (after the run's output: not resampled) and its rewrite, then the copies
    srv.push(block(STUB), block(STUB), *[block(STUB)] * test_check.MAX_FRESH, copy[0], block(STUB), block(STUB), *copy,
             j("final_answer", text="Could not."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    edits = [m["content"] for m in result.messages if m.get("role") == "tool" and m.get("name") == "edit_file"]
    assert len(edits) == 3 and edits[-1].startswith("error: you made this exact edit_file call 3 times")
    assert result.tools_stopped is not None and exit_code(result) == 4


async def test_the_pre_read_s_reads_do_not_count_toward_the_loop_guard(make_agent: AgentFactory, srv: ScriptedServer,
                                                                       exercise: Path) -> None:
    srv.push(j("read_file", path="acronym.py"), j("read_file", path="acronym.py"), j("final_answer", text="A stub."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation("What is in acronym.py?")
    reads = [m["content"] for m in result.messages if m.get("role") == "tool" and m.get("name") == "read_file"]
    assert len(reads) == 3 and all(r.startswith("     1\tdef abbreviate") for r in reads)  # the pre-read's, then 2
    assert result.tools_stopped is None


HALF = "def abbreviate(words):\n    return ''.join(w[0] for w in words.split())\n"  # passes test_basic only


async def test_a_repair_that_passes_fewer_tests_is_undone_and_the_turn_reports_the_best_run(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    worse = "def abbreviate(words):\n    return words[0]\n"
    import_error = "import acronym_helpers\n\n\ndef abbreviate(words):\n    return ''\n"  # 1 of 1 "failed", 0 passed
    # the repair and the first two fresh attempts pass none; the last fresh attempt breaks the import
    srv.push(block(HALF), block(worse), block(worse.replace("[0]", "[:1]")), block(worse.replace("[0]", "[-1]")),
             block(import_error), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == HALF  # the version that passed 1 of 2, put back
    assert agent_steps(result.messages) == ["preread", "first_edit"] + ["test_check", "test_repair"] * 4 + [
        "test_check", "test_restore"]
    restore = next(m for m in result.messages if (m.get("meta") or {}).get("test_restore"))
    args = json.loads(restore["tool_calls"][0]["function"]["arguments"])
    assert args == {"path": "acronym.py", "old_string": import_error, "new_string": HALF}
    assert result.messages[result.messages.index(restore) + 1]["content"].startswith("Edited acronym.py")
    assert result.tests_failing == "acronym_test.py (1 of 2 tests failed)" and exit_code(result) == 4
    step = srv.requests[-1].body  # after the restore the model may only answer: asked plainly, of the kept version
    assert "tools" not in step and "response_format" not in step
    asked = step["messages"][1]["content"]
    assert "still fail (1 of 2 tests failed)" in asked and "acronym_helpers" not in asked and HALF.splitlines()[1] in asked


async def test_of_two_runs_that_pass_as_many_the_later_version_is_put_back(make_agent: AgentFactory, srv: ScriptedServer,
                                                                  exercise: Path) -> None:
    other = HALF.replace("words.split()", "words.split(' ')")  # also passes test_basic only
    srv.push(block(HALF), block(other), block(WRONG), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == other  # WRONG (0 of 2) undone, to the later of the two ties
    assert agent_steps(result.messages)[-1] == "test_restore"
    assert result.tests_failing == "acronym_test.py (1 of 2 tests failed)"


def test_the_restore_edit_is_the_lines_that_differ_when_they_are_unique() -> None:
    current = "import x\n\ndef f():\n    return 1\n\ndef g():\n    pass\n"
    best = "import x\n\ndef f():\n    return 2\n\ndef g():\n    pass\n"
    assert test_check.restore_edit(current, best) == {"old_string": "    return 1\n", "new_string": "    return 2\n"}
    twice = "def f():\n    pass\n\ndef g():\n    pass\n"
    assert test_check.restore_edit(twice, "def f():\n    pass\n\ndef g():\n    return 0\n") == {
        "old_string": twice, "new_string": "def f():\n    pass\n\ndef g():\n    return 0\n"}  # "    pass" twice
    assert test_check.restore_edit("a\nb\n", "a\nx\nb\n") == {"old_string": "a\nb\n", "new_string": "a\nx\nb\n"}


async def test_a_repair_that_came_back_unchanged_is_followed_by_one_fresh_attempt_from_the_stub(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(block(WRONG), block(WRONG), block(WRONG), block(DONE), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0 and result.tests_failing is None
    assert agent_steps(result.messages) == ["preread", "first_edit", "test_check", "test_repair", "test_repair",
                                            "test_check"]
    fresh = next(m for m in result.messages if (m.get("meta") or {}).get("fresh"))
    assert json.loads(fresh["tool_calls"][0]["function"]["arguments"]) == {
        "path": "acronym.py", "old_string": WRONG, "new_string": DONE}
    ask = srv.requests[3].body
    assert ask["temperature"] == 0.7 and len(ask["messages"]) == 2
    content = ask["messages"][1]["content"]
    assert f"acronym.py as it was at the start:\n```python\n{STUB}```" in content and WRONG not in content
    assert "AssertionError: 'PNG ' != 'PNG'" in content and "INSTRUCTIONS.md:" in content
    assert content.endswith("no JSON, no tool call.")


async def test_a_repair_that_passes_no_more_is_followed_by_a_fresh_attempt_and_a_better_one_is_repaired(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    other = WRONG.replace("+ ' '", "+ '!'")  # the repair: as bad as the first edit
    srv.push(block(WRONG), block(other), block(HALF), block(DONE), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    assert agent_steps(result.messages) == ["preread", "first_edit"] + ["test_check", "test_repair"] * 3 + [
        "test_check"]
    kinds = [set(m["meta"]) & {"test_repair", "fresh"} for m in result.messages
             if (m.get("meta") or {}).get("test_repair")]
    assert kinds == [{"test_repair"}, {"test_repair", "fresh"}, {"test_repair"}]  # HALF passed more: repaired
    first, fresh = (srv.requests[i].body["messages"][1]["content"] for i in (0, 2))
    assert srv.requests[2].body["temperature"] == 0.7 and "failed these tests of acronym_test.py" in fresh
    # the fresh question starts as the first edit's did, so a model server's prompt cache holds all that
    assert TESTS.rstrip() in os.path.commonprefix([first, fresh])
    repair = srv.requests[3].body["messages"][1]["content"]
    assert HALF in repair and "AssertionError: 'Ld' != 'LCD'" in repair  # the repair works on the fresh version


async def test_a_fresh_attempt_that_renames_the_function_is_not_written(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path, caplog: pytest.LogCaptureFixture) -> None:
    renamed = DONE.replace("def abbreviate", "def acronym")
    srv.push(block(WRONG), block(WRONG), block(WRONG), *[block(renamed)] * test_check.MAX_FRESH,
             j("final_answer", text="Could not."))
    with caplog.at_level("INFO", logger="agentls.loop"):
        result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == WRONG and exit_code(result) == 4
    assert "fresh attempt at acronym.py: not written (" in caplog.text and "abbreviate" in caplog.text  # why, logged
    assert agent_steps(result.messages) == ["preread", "first_edit", "test_check", "test_repair"]


async def _retry(agent: Any) -> tuple[Any, list[dict[str, Any]]]:
    """Aider's second try (bench/exercism.py): the result and the retry turn's messages."""
    result = await agent.run_conversation(
        "FF\nAssertionError: 'PNG ' != 'PNG'\nThe tests in acronym_test.py fail as shown above. The tests are "
        "correct, don't change them. Fix the code in acronym.py to resolve the errors.")
    return result, result.messages[next(i for i, m in enumerate(result.messages) if m.get("role") == "user"
                                         and "fail as shown above" in str(m.get("content"))):]


async def test_a_retry_whose_first_edit_came_back_unchanged_runs_the_tests_and_makes_the_fresh_attempt(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    agent = make_agent(small_model=True, tool_mode="json")  # auto-edit: no test run in the first turn
    srv.push(block(WRONG), j("final_answer", text="Done."))
    await agent.run_conversation(ASK)
    agent.policy.mode = "yolo"  # the user allows commands for the retry
    srv.push(block(WRONG), block(WRONG), block(DONE), j("final_answer", text="Fixed."))
    result, turn = await _retry(agent)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    assert agent_steps(turn) == ["preread", "first_edit", "test_check", "test_repair", "test_check"]
    fresh = next(m for m in turn if (m.get("meta") or {}).get("fresh"))
    assert json.loads(fresh["tool_calls"][0]["function"]["arguments"])["old_string"] == WRONG
    ask = srv.requests[4].body["messages"][1]["content"]  # the stub from the first turn's pre-read
    assert f"acronym.py as it was at the start:\n```python\n{STUB}```" in ask and "2 of 2 tests failed" in ask


async def test_a_retry_whose_first_edit_is_refused_runs_the_tests_and_makes_the_fresh_attempt(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    # in the benchmark, crypto-square's retry renamed the function and pov's "fix the code" named nothing in
    # its 87 lines: both first edits were refused, and the turn ended without a test run
    agent = make_agent(small_model=True, tool_mode="json")
    srv.push(block(WRONG), j("final_answer", text="Done."))
    await agent.run_conversation(ASK)
    agent.policy.mode = "yolo"
    srv.push(block(WRONG.replace("def abbreviate", "def acronym")), block(DONE), j("final_answer", text="Fixed."))
    result, turn = await _retry(agent)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    refused = next(m for m in turn if m.get("role") == "tool" and m.get("name") == "edit_file")
    assert refused["content"].startswith("error: this edit was not made: the rewrite of acronym.py dropped")
    assert agent_steps(turn) == ["preread", "first_edit", "test_check", "test_repair", "test_check"]
    assert sum(bool((m.get("meta") or {}).get("fresh")) for m in turn) == 1


async def test_a_file_too_long_to_write_back_whole_gets_no_fresh_attempt(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agentls.agent.loop.fresh_attempt.MAX_REWRITE_CHARS", 10)  # the stub: 30 characters
    srv.push(*[block(WRONG)] * 3, j("final_answer", text="Could not."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == WRONG and exit_code(result) == 4
    assert len(srv.requests) == 4 and not any((m.get("meta") or {}).get("fresh") for m in result.messages)


async def test_a_pre_read_that_compression_digested_is_read_again_for_the_agent_s_rewrite(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    many = "".join(f"\n    def test_case_{i}(self):\n        self.assertEqual(abbreviate('Portable Network "
                   f"Graphics'), 'PNG')  # case {i}\n" for i in range(40))
    (exercise / "acronym_test.py").write_text(TESTS + many)  # long: compression digests its read
    agent = make_agent(small_model=True, tool_mode="json")
    srv.push(block(WRONG), j("final_answer", text="Done."))
    await agent.run_conversation(ASK)
    await agent.compress(aggressive=True)
    digested = [m for m in agent.messages if m.get("role") == "tool" and (m.get("meta") or {}).get("pruned")]
    assert digested and all("case 39" not in str(m["content"]) for m in digested)  # the test file's read, digested
    srv.push(block(DONE), j("final_answer", text="Fixed."))
    await agent.run_conversation("AssertionError: 'PNG ' != 'PNG'\nThe tests in acronym_test.py fail as shown "
                                 "above. The tests are correct, don't change them. Fix the code in acronym.py.")
    ask = srv.requests[-2].body["messages"][-1]["content"]
    assert "acronym_test.py:\n```python\nimport unittest" in ask and "case 39" in ask
    assert "[Old tool output" not in ask


JS_TESTS = """const test = require('node:test');
const assert = require('node:assert');
const { abbreviate } = require('./acronym.js');

test('basic', () => { assert.strictEqual(abbreviate('Portable Network Graphics'), 'PNG'); });
test('hyphen', () => { assert.strictEqual(abbreviate('Liquid-crystal display'), 'LCD'); });
"""
JS_STUB = "exports.abbreviate = (words) => {\n  throw new Error('Remove this line and implement the function');\n};\n"
JS_WRONG = "exports.abbreviate = (words) => {\n  return words.split(' ').map((w) => w[0]).join('');\n};\n"
JS_DONE = "exports.abbreviate = (words) => {\n  return words.split(/[\\s-]+/).map((w) => w[0].toUpperCase()).join('');\n};\n"
JS_ASK = "Implement the stub in acronym.js so that it satisfies INSTRUCTIONS.md. Keep the function names."


def js_block(body: str) -> Reply:
    return text(f"```javascript\n{body}```")


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
async def test_a_javascript_change_is_checked_with_node_s_own_test_runner(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "acronym.js").write_text(JS_STUB)
    (workspace / "acronym.test.js").write_text(JS_TESTS)
    (workspace / "INSTRUCTIONS.md").write_text("# Instructions\n\nPortable Network Graphics -> PNG.\n")
    srv.push(js_block(JS_WRONG), js_block(JS_DONE), j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(JS_ASK)
    assert (workspace / "acronym.js").read_text() == JS_DONE and exit_code(result) == 0
    assert agent_steps(result.messages) == ["preread", "first_edit", "test_check", "test_repair", "test_check"]
    runs = [m["content"] for m in result.messages if m.get("role") == "tool" and m.get("name") == "terminal"]
    assert runs[0].startswith("$ node --test --test-reporter=tap acronym.test.js\n[exit code 1]")
    repair = json.loads(next(m for m in result.messages if (m.get("meta") or {}).get("test_repair"))[
        "tool_calls"][0]["function"]["arguments"])["change"]
    assert "(1 of 2 tests failed)" in repair and "hyphen (acronym.test.js:6:1): Expected values to be strictly " \
        "equal: 'Ld' !== 'LCD'" in repair
    assert "acronym.test.js:\n```javascript\nconst test" in srv.requests[1].body["messages"][1]["content"]


@pytest.mark.parametrize(("test", "text", "command"), [
    ("acronym.test.js", JS_TESTS, "node --test --test-reporter=tap acronym.test.js"),
    ("acronym.test.mjs", "import test from 'node:test';\n", "node --test --test-reporter=tap acronym.test.mjs"),
    ("acronym.spec.js", "describe('x', () => { it('y', () => expect(1).toBe(1)); });\n", None),  # Jest: not run
])
def test_a_javascript_test_runs_only_when_it_is_written_for_node_s_runner(test: str, text: str,
                                                                         command: str | None) -> None:
    assert test_check.command_for(test, text, False) == command


def test_a_tap_run_whose_file_did_not_load_names_the_error() -> None:
    output = ("TAP version 13\n# /w/acronym.js:3\n# };\n# ^\n# SyntaxError: Unexpected token '}'\n#     at wrapSafe\n"
              "not ok 1 - /w/acronym.test.js\n  ---\n  location: '/w/acronym.test.js:1:1'\n  error: 'test failed'\n"
              "  ...\n1..1\n# tests 1\n# pass 0\n# fail 1\n")
    run = read_run(output)
    assert run is not None and run.failures == ("/w/acronym.test.js (acronym.test.js:1:1): SyntaxError: Unexpected "
                                                "token '}' (/w/acronym.js:3)",)


def test_a_tap_summary_is_read() -> None:
    output = ("TAP version 13\nok 1 - basic\n  ---\n  duration_ms: 1.9\n  ...\nnot ok 2 - hyphen\n  ---\n"
              "  location: '/w/acronym.test.js:6:1'\n  error: |-\n    Expected values to be strictly equal:\n\n"
              "    'Ld' !== 'LCD'\n\n  code: 'ERR_ASSERTION'\n  ...\n1..2\n# tests 2\n# suites 0\n# pass 1\n"
              "# fail 1\n# cancelled 0\n")
    run = read_run(output.replace("not ok 2 - hyphen", "not ok 2 - boom\n  ---\n  error: 'it broke'\n  ...\n"
                                                        "not ok 3 - hyphen"))
    assert run is not None and (run.ran, run.failed) == (2, 1)
    assert run.failures == ("boom: it broke", "hyphen (acronym.test.js:6:1): Expected values to be strictly equal: 'Ld' !== 'LCD'",)


async def test_a_repair_that_breaks_the_tests_loading_is_a_failing_run_and_is_undone(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    # the tests stop loading: unittest prints a traceback and no summary (beer-song's repair, in the benchmark)
    (exercise / "acronym_test.py").write_text(TESTS.replace("import unittest\n", "import unittest\n\nimport acronym\n"
                                                            "assert not hasattr(acronym, 'BROKEN')\n"))
    broken = HALF + "BROKEN = True\n"
    srv.push(block(HALF), block(broken), *(block(broken.replace("True", n)) for n in "123"),
             j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json", approval="yolo").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == HALF  # the run that passed 1 of 2, put back
    assert result.tests_failing == "acronym_test.py (1 of 2 tests failed)" and exit_code(result) == 4
    fresh = srv.requests[2].body["messages"][1]["content"]  # the broken repair's run did not pass more: fresh
    assert "- the tests did not run: AssertionError" in fresh


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("swap", ["fifo", "symlink out"])
async def test_a_digested_pre_read_swapped_for_a_fifo_or_a_link_out_is_neither_read_nor_run(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path, tmp_path: Path, swap: str) -> None:
    many = "".join(f"\n    def test_case_{i}(self):\n        self.assertEqual(abbreviate('A B'), 'AB')  # case {i}\n"
                   for i in range(60))
    (exercise / "acronym_test.py").write_text(TESTS + many)
    agent = make_agent(small_model=True, tool_mode="json")
    srv.push(block(WRONG), j("final_answer", text="Done."))
    await agent.run_conversation(ASK)
    await agent.compress(aggressive=True)
    (exercise / "acronym_test.py").unlink()
    if swap == "fifo":
        os.mkfifo(exercise / "acronym_test.py")  # opening it would block the turn for ever
    else:
        (tmp_path / "secret_test.py").write_text("SECRET = 'outside the workspace'\n")
        (exercise / "acronym_test.py").symlink_to(tmp_path / "secret_test.py")
    agent.policy.mode = "yolo"
    srv.push(block(DONE), j("final_answer", text="Fixed."))
    with anyio.fail_after(60):
        result = await agent.run_conversation("The tests in acronym_test.py fail. Fix the code in acronym.py.")
    asks = [r.body["messages"][-1]["content"] for r in srv.requests[2:]]
    assert all("acronym_test.py:\n```" not in a and "outside the workspace" not in a for a in asks)
    assert (exercise / "acronym.py").read_text() == DONE
    retry = next(i for i, m in enumerate(result.messages) if m.get("role") == "user" and "Fix the code" in str(
        m.get("content")))
    assert "test_check" not in agent_steps(result.messages[retry:])  # never run
    assert result.tests_failing is None
