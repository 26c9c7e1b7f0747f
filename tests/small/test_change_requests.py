"""Issue 27: a small model asked for a change makes one, keeps the names, says a no-op plainly, and a turn that
changed nothing does not pass for a success (agent/loop/change_request.py, agent/tools/keep_names.py,
agent/tools/noop.py, the search note in agent/tools/listing.py). The scripted provider plays the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.footer import footer, summary, summary_json
from agentls.agent.loop.change_request import change_request
from agentls.agent.loop.preread import TEST_LINES, find_tests
from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, text, tools
from agentls.server.run import exit_code

from .conftest import AgentFactory, results

STUB = "def abbreviate(words):\n    pass\n"
DONE = "def abbreviate(words):\n    return ''.join(w[0].upper() for w in words.replace('-', ' ').split())\n"
RENAMED = "def acronym(phrase):\n    return ''.join(w[0].upper() for w in phrase.split())\n"
ASK = ("Implement the stub in acronym.py so that it satisfies INSTRUCTIONS.md. Keep the function and class names. "
       "Use only the standard library.")
INSTRUCTIONS = "# Instructions\n\nConvert a phrase to its acronym: Portable Network Graphics -> PNG.\n"


def j(name: str, **arguments: Any) -> Reply:
    return text(json.dumps({"name": name, "arguments": arguments}))


def block(body: str) -> Reply:
    return text(f"Here it is:\n```python\n{body}```")


def offered(req: RecordedRequest) -> list[str]:
    return [v["properties"]["name"]["const"] for v in req.body["response_format"]["json_schema"]["schema"]["anyOf"]]


def steps(srv: ScriptedServer) -> list[RecordedRequest]:
    return [r for r in srv.requests if "response_format" in r.body]  # the rewrites have no grammar


@pytest.fixture
def exercise(workspace: Path) -> Path:
    (workspace / "acronym.py").write_text(STUB)
    (workspace / "INSTRUCTIONS.md").write_text(INSTRUCTIONS)
    (workspace / "acronym_test.py").write_text("from acronym import abbreviate\n")
    return workspace


@pytest.mark.parametrize(("request_text", "targets", "context"), [
    (ASK, ("acronym.py",), ("INSTRUCTIONS.md",)),
    ("In greet.py, change the greeting word Hello to Hi", ("greet.py",), ()),
    ("Could you fix calc.py? It adds instead of subtracting.", ("calc.py",), ()),
    ("Remove the function sub from calc.py", ("calc.py",), ()),
    ("Fix the code in acronym.py per spec.md.", ("acronym.py",), ("spec.md",)),
    ("1 failed\n\nThe tests in acronym_test.py fail as shown above. The tests are correct, don't change them. "
     "Fix the code in acronym.py to resolve the errors.", ("acronym.py",), ()),
])
def test_a_change_request_names_its_targets_and_its_context(request_text: str, targets: tuple[str, ...],
                                                             context: tuple[str, ...]) -> None:
    found = change_request(request_text)
    assert found is not None and found.targets == targets and found.context == context


@pytest.mark.parametrize(("target", "files", "found"), [
    ("acronym.py", ["acronym.py", "acronym_test.py", "INSTRUCTIONS.md"], "acronym_test.py"),
    ("src/calc.py", ["src/calc.py", "tests/test_calc.py", "other/calc_test.py"], "tests/test_calc.py"),
    ("src/calc.py", ["src/calc.py", "src/test_calc.py", "tests/test_calc.py"], "src/test_calc.py"),  # beside it
    ("web/app.ts", ["web/app.ts", "web/app.test.ts"], "web/app.test.ts"),
    ("acronym_test.py", ["acronym.py", "acronym_test.py"], None),  # the tests themselves have no tests
    ("Makefile", ["Makefile", "Makefile_test"], None),
    ("greet.py", ["greet.py", "greeting_test.py"], None),
])
def test_the_tests_of_a_target_are_found_by_their_usual_names(target: str, files: list[str],
                                                                found: str | None) -> None:
    assert find_tests(target, files) == found


async def test_a_long_test_file_is_read_in_part_and_not_again_in_the_retry_turn(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    (exercise / "acronym_test.py").write_text("from acronym import abbreviate\n" + "".join(
        f"def test_{i}():\n    assert abbreviate('Portable Network Graphics number {i}') == 'PNGN{i}'\n"
        for i in range(400)))
    srv.push(j("edit_file", path="acronym.py", change="implement abbreviate"), block(DONE),
             j("final_answer", text="Implemented abbreviate."),
             j("edit_file", path="acronym.py", change="handle numbers"), block(DONE.replace("w[0]", "w[:1]")),
             j("final_answer", text="Fixed."))
    agent = make_agent(small_model=True, tool_mode="json")
    first = await agent.run_conversation(ASK)
    reads = [json.loads(c["function"]["arguments"]) for c in first.messages[2]["tool_calls"]]
    assert reads[2]["path"] == "acronym_test.py" and TEST_LINES // 2 < reads[2]["limit"] <= TEST_LINES
    shown = first.messages[5]["content"]
    assert "test_0()" in shown and "test_399()" not in shown and "use offset/limit to read more" in shown
    retry = await agent.run_conversation("1 failed\n\nThe tests in acronym_test.py fail as shown above. Fix the "
                                         "code in acronym.py to resolve the errors.")
    again = next(m for m in retry.messages[len(first.messages):] if m.get("tool_calls"))
    assert [json.loads(c["function"]["arguments"])["path"] for c in again["tool_calls"]] == ["acronym.py"]


async def test_no_test_file_is_read_when_the_request_s_own_files_fill_the_pre_read(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    (exercise / "INSTRUCTIONS.md").write_text(INSTRUCTIONS + "Some more words about acronyms.\n" * 500)
    srv.push(j("edit_file", path="acronym.py", change="implement abbreviate"), block(DONE),
             j("final_answer", text="Implemented abbreviate."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(ASK)
    assert [json.loads(c["function"]["arguments"])["path"] for c in result.messages[2]["tool_calls"]] == [
        "acronym.py", "INSTRUCTIONS.md"]


async def test_a_request_that_is_no_change_reads_no_tests(make_agent: AgentFactory, srv: ScriptedServer,
                                                          exercise: Path) -> None:
    srv.push(j("final_answer", text="It takes the first letters."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(
        "What does abbreviate in acronym.py do?")
    assert [json.loads(c["function"]["arguments"])["path"] for c in result.messages[2]["tool_calls"]] == [
        "acronym.py"]


@pytest.mark.parametrize("request_text", [
    "What does README.md say?", "What does the greet function in greet.py return? Do not change any files.",
    "Run python greet.py Alice and tell me what it prints", "Which file defines parse_date?",
    "Don't change greet.py, just explain it.", "The add function in calc.py: what does it do?"])
def test_questions_and_commands_are_not_change_requests(request_text: str) -> None:
    assert change_request(request_text) is None


async def test_the_agent_makes_the_first_edit_of_the_stub_and_its_rewrite_sees_the_instructions_and_tests(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(block(DONE), text("Implemented abbreviate."))  # the answer, asked plainly (loop/plain_answer.py)
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    assert result.final_response == "Implemented abbreviate."  # no note: the change was made
    assert [c["function"]["arguments"] for c in result.messages[2]["tool_calls"]] == [
        '{"path": "acronym.py"}', '{"path": "INSTRUCTIONS.md"}', '{"path": "acronym_test.py"}'
    ]  # the context file and the stub's tests are pre-read with the stub
    edit = result.messages[6]
    assert edit["meta"] == {"first_edit": True} and json.loads(edit["tool_calls"][0]["function"]["arguments"]) == {
        "path": "acronym.py", "change": "Implement the stub in acronym.py so that it satisfies INSTRUCTIONS.md."}
    rewrite = srv.requests[0].body  # the model's first call writes the file
    assert "response_format" not in rewrite and "Graphics -> PNG" in json.dumps(rewrite["messages"])
    assert "from acronym import abbreviate" in json.dumps(rewrite["messages"])
    asked = rewrite["messages"][-1]["content"]  # one plain message (loop/focused.py): the files, then the stub
    assert asked.index("INSTRUCTIONS.md:\n") < asked.index("acronym.py (the whole file) now:\n```python\n")
    assert rewrite["messages"][-1]["content"].endswith("no JSON, no tool call.")  # what to reply comes last
    assert "Its bodies that are only `pass` or `...` are stubs: write their code.\n" in rewrite["messages"][-1][
        "content"] and "The change:" not in rewrite["messages"][-1]["content"]  # the change is the request's own
    answer = srv.requests[1].body  # the stub changed: the next step answers, asked plainly (loop/plain_answer.py)
    assert "tools" not in answer and "+    return ''.join(" in answer["messages"][1]["content"]
    assert len(srv.requests) == 2 and result.api_calls == 2
    assert "Keep" not in rewrite["messages"][0]["content"]  # nothing rides the system prompt


async def test_after_the_first_edit_failed_the_model_s_step_may_only_be_an_edit_of_the_stub(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(text("I cannot write code blocks."), j("edit_file", path="acronym.py", change="implement abbreviate"),
             block(DONE), j("final_answer", text="Implemented abbreviate."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    first = steps(srv)[0]
    assert offered(first) == ["edit_file"]  # no final_answer, no read: an edit of the named file
    edit = first.body["response_format"]["json_schema"]["schema"]["anyOf"][0]["properties"]["arguments"]
    assert edit["properties"]["path"]["enum"] == ["acronym.py"]
    assert "had no code block" in results(result)[3]


async def test_a_first_edit_whose_asking_sentence_names_no_file_carries_the_whole_request(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "calc.py").write_text("def sub(a, b):\n    return a + b\n")
    ask = "In calc.py, sub returns a + b. Fix it so that it returns a - b."
    srv.push(block("def sub(a, b):\n    return a - b\n"), j("final_answer", text="Fixed."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(ask)
    edit = next(m for m in result.messages if (m.get("meta") or {}).get("first_edit"))
    assert json.loads(edit["tool_calls"][0]["function"]["arguments"]) == {"path": "calc.py", "change": ask}
    assert (workspace / "calc.py").read_text() == "def sub(a, b):\n    return a - b\n" and exit_code(result) == 0


async def test_a_change_request_of_two_files_leaves_the_first_edit_to_the_model(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    (exercise / "helper.py").write_text("def helper():\n    pass\n")
    srv.push(j("edit_file", path="acronym.py", change="implement abbreviate"), block(DONE),
             j("final_answer", text="Implemented abbreviate."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(
        "Implement the stubs in acronym.py and helper.py.")
    assert not any((m.get("meta") or {}).get("first_edit") for m in result.messages)
    assert sorted(offered(steps(srv)[0])) == ["edit_file"] and (exercise / "acronym.py").read_text() == DONE


async def test_in_plan_mode_the_agent_makes_no_first_edit(make_agent: AgentFactory, srv: ScriptedServer,
                                                          exercise: Path) -> None:
    srv.push(text("Plan: implement abbreviate."))
    result = await make_agent(small_model=True, approval="plan").run_conversation(ASK)
    assert not any((m.get("meta") or {}).get("first_edit") for m in result.messages)
    assert (exercise / "acronym.py").read_text() == STUB


async def test_a_rewrite_that_renames_the_function_is_refused_with_the_names_and_the_model_retries(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(block(RENAMED),
             j("edit_file", path="acronym.py", change="implement abbreviate, keep its name"), block(DONE),
             j("final_answer", text="Done."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE
    refused = next(r for r in results(result) if "dropped or changed" in r)
    assert "abbreviate(words)" in refused and "acronym(phrase)" in refused and "nothing was changed" in refused.lower()
    assert offered(steps(srv)[0]) == ["edit_file"]  # after the refusal it must try again
    assert not result.failed_edits and exit_code(result) == 0


@pytest.mark.parametrize(("before", "after"), [
    ("class Robot:\n    pass\n\n\ndef make():\n    pass\n", "class Bot:\n    pass\n\n\ndef make():\n    return 1\n"),
    ("def slices(series, length):\n    pass\n", "def slices(series):\n    return []\n"),
    ("async def fetch(url):\n    pass\n", "def fetch(url):\n    return url\n"),
])
async def test_dropped_classes_and_changed_signatures_are_refused(make_agent: AgentFactory, srv: ScriptedServer,
                                                                  workspace: Path, before: str, after: str) -> None:
    (workspace / "mod.py").write_text(before)
    srv.push(block(after), text("done"), text("done"))
    result = await make_agent(small_model=True).run_conversation("Implement mod.py")
    assert (workspace / "mod.py").read_text() == before
    assert any("dropped or changed" in r for r in results(result))


async def test_a_rename_the_user_asked_for_is_made(make_agent: AgentFactory, srv: ScriptedServer,
                                                   exercise: Path) -> None:
    srv.push(block(RENAMED), j("final_answer", text="Renamed."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(
        "In acronym.py, rename abbreviate to acronym and implement it")
    assert (exercise / "acronym.py").read_text() == RENAMED and exit_code(result) == 0


TWO = "Implement the stubs in acronym.py and helper.py so that they satisfy INSTRUCTIONS.md."


async def test_an_answer_in_words_gets_one_nudge_naming_the_file_then_the_edit(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    """Native tool calls (no grammar to force an edit), two files (no first edit by the agent): the model
    answers "already implemented"."""
    (exercise / "helper.py").write_text("def helper():\n    pass\n")
    srv.push(text("The stub is already implemented."), tools(call("edit_file", {"path": "acronym.py",
                                                                              "change": "implement"})),
             block(DONE), text("Implemented."))
    result = await make_agent(small_model=True).run_conversation(TWO)
    assert (exercise / "acronym.py").read_text() == DONE and result.final_response == "Implemented."
    nudged = srv.requests[1].body  # after the answer in words, the nudged step
    last = nudged["messages"][-1]
    assert last["role"] == "user" and "You answered without changing acronym.py, helper.py" in json.dumps(last)
    assert "already implemented" not in json.dumps(result.messages)  # the answer not taken is not stored
    assert nudged["messages"][0]["content"] == srv.requests[0].body["messages"][0]["content"]  # system stable


async def test_a_change_request_that_changed_nothing_exits_4_and_names_the_file(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    (exercise / "helper.py").write_text("def helper():\n    pass\n")
    srv.push(text("Already implemented."), text("It is already implemented, really."))
    result = await make_agent(small_model=True).run_conversation(TWO)
    assert (exercise / "acronym.py").read_text() == STUB and result.completed
    assert result.unmade_change == "acronym.py, helper.py" and exit_code(result) == 4
    assert footer(result) == "no files changed; change asked for not made: acronym.py, helper.py"
    assert summary(result) == footer(result)  # the editors' end-of-turn line says the same
    assert summary_json(result)["changeNotMade"] == "acronym.py, helper.py"
    assert result.to_json()["unmade_change"] == "acronym.py, helper.py"
    user_steps = [m for r in srv.requests for m in r.body["messages"][-1:] if m["role"] == "user"]
    assert sum("You answered without changing" in json.dumps(m) for m in user_steps) == 1  # one nudge only


async def test_a_first_edit_the_model_never_got_right_exits_4(make_agent: AgentFactory, srv: ScriptedServer,
                                                              exercise: Path) -> None:
    srv.push(text("Already implemented."), text("It is already implemented."), text("Really."), text("Yes."))
    result = await make_agent(small_model=True).run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == STUB
    assert result.unmade_change == "acronym.py" and exit_code(result) == 4
    # its words said otherwise: the answer, stored and streamed, ends with what happened
    note = "\n\n[agentls: no file was changed; the change asked for in acronym.py was not made]"
    assert result.final_response.endswith(note) and result.messages[-1]["content"].endswith(note)
    assert footer(result).endswith("change asked for not made: acronym.py; the last tool call failed") or \
        "change asked for not made: acronym.py" in footer(result)


async def test_a_question_is_answered_at_once_and_exits_0(make_agent: AgentFactory, srv: ScriptedServer,
                                                          workspace: Path) -> None:
    srv.push(j("final_answer", text="A tiny example project."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation("What does README.md say?")
    assert result.unmade_change is None and exit_code(result) == 0 and summary(result) is None
    assert "final_answer" in offered(steps(srv)[0])


async def test_deleting_a_line_that_is_not_there_says_so_and_the_next_step_only_answers(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("buy milk\ncall mom\n")
    srv.push(j("final_answer", text="notes.txt has no TODO line, so I changed nothing."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(
        "Delete the TODO line from notes.txt")
    (edited,) = [r for r in results(result) if "TODO" in r]
    assert edited.startswith("nothing to change: notes.txt has no line containing TODO")
    assert len(srv.requests) == 1  # no rewrite was asked for
    assert offered(steps(srv)[0]) == ["final_answer"]
    assert (workspace / "notes.txt").read_text() == "buy milk\ncall mom\n"
    assert not result.failed_edits and "change asked for not made: notes.txt" in footer(result)


async def test_a_narrowed_search_that_finds_nothing_shows_where_the_rest_of_the_workspace_matches(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "src" / "pkg" / "dates.py").write_text("def parse_date(s):\n    return s\n")
    srv.push(tools(call("search_files", {"pattern": "def parse_date", "path": "greet.py"})),
             tools(call("search_files", {"pattern": "def parse_date", "glob": "*.md"})),
             tools(call("search_files", {"pattern": "def nowhere_at_all", "path": "src"})), text("done"))
    narrowed, globbed, nowhere = results(await make_agent().run_conversation("Which file defines parse_date?"))
    assert narrowed.startswith("no matches for 'def parse_date' in greet.py")
    assert "the rest of the workspace has 1 match" in narrowed and "src/pkg/dates.py:1:def parse_date" in narrowed
    assert "(files matching '*.md')" in globbed and "src/pkg/dates.py:1:" in globbed
    assert "the rest of the workspace has no matches either" in nowhere


async def test_a_first_edit_whose_rewrite_outlasts_the_tool_s_own_time_limit_still_lands(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    """On a slow CPU the model writing the file takes minutes (a pre-read of instructions and tests first):
    the model call has the provider's limits, and the edit tool's own does not cut it."""
    from dataclasses import replace

    from agentls.agent.tools.registry import BUILTIN_TOOLS

    quick = [replace(t, timeout=0.2) if t.name == "edit_file" else t for t in BUILTIN_TOOLS]
    slow = block(DONE)
    slow.latency = 0.6
    srv.push(slow, j("final_answer", text="Implemented abbreviate."))
    result = await make_agent(small_model=True, tool_mode="json", tools=quick).run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    assert not any("timed out" in r for r in results(result))


@pytest.mark.parametrize("kind", ["fifo", "symlink out", "one huge line"])
async def test_a_hostile_test_file_is_not_pre_read_and_the_turn_goes_on(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path, tmp_path: Path, kind: str) -> None:
    import os

    (exercise / "acronym_test.py").unlink()
    if kind == "fifo":
        os.mkfifo(exercise / "acronym_test.py")  # an open() of it would wait for a writer forever
    elif kind == "symlink out":
        (tmp_path / "secret.py").write_text("TOKEN = 'not for the model'\n" * 50)
        (exercise / "acronym_test.py").symlink_to(tmp_path / "secret.py")
    else:  # a minified or generated file: its first line alone is over the pre-read's room
        (exercise / "acronym_test.py").write_text("x = '" + "not for the model " * 2000 + "'\n")
    srv.push(block(DONE), j("final_answer", text="Implemented abbreviate."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    assert [json.loads(c["function"]["arguments"])["path"] for c in result.messages[2]["tool_calls"]] == [
        "acronym.py", "INSTRUCTIONS.md"]
    assert "not for the model" not in json.dumps([r.body for r in srv.requests])


@pytest.mark.parametrize(("before", "after", "kept"), [
    ("def line_up(name, number):\n    pass\n", "def line_up(name: str, number: int) -> str:\n    return name\n", True),
    ("def slices(series, length):\n    pass\n", "def slices(series, length=1):\n    return []\n", True),
    ("def f(a, /, b, *, c, **kw):\n    pass\n", "def f(a: int, /, b: int = 2, *, c: int, **kw: object):\n    pass\n",
     True),
    ("def slices(series, length):\n    pass\n", "def slices(length, series):\n    return []\n", False),  # order
    ("def f(a, b):\n    pass\n", "def f(a, *, b):\n    pass\n", False),  # b is keyword-only now
    ("def f(*args):\n    pass\n", "def f(*items):\n    pass\n", False),
])
def test_a_rewrite_may_add_type_hints_and_defaults_but_not_move_or_rename_parameters(
        before: str, after: str, kept: bool) -> None:
    from agentls.agent.tools.keep_names import lost_names

    lost = lost_names(Path("mod.py"), before, after, "Implement the stub in mod.py")
    assert (lost is None) == kept, lost


async def test_a_rewrite_that_echoes_the_stub_is_asked_for_once_more_sampling(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    """The real model, shown the stub last, wrote it back unchanged (two_bucket.py, complex_numbers.py)."""
    srv.push(block(STUB), block(DONE), j("final_answer", text="Implemented abbreviate."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE and exit_code(result) == 0
    first, again = srv.requests[0].body, srv.requests[1].body
    assert first["temperature"] == 0 and again["temperature"] == 0.7
    assert again["messages"][-1]["content"] == first["messages"][-1]["content"] + (
        "\nYour reply was the text exactly as it is now, with nothing changed. Reply again with the text with the "
        "change made.")
    assert again["messages"][:-1] == first["messages"][:-1]  # the same prefix: the prompt cache covers it


async def test_a_resampled_rewrite_that_echoes_again_is_one_failed_edit(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(block(STUB), block(STUB), j("edit_file", path="acronym.py", change="return the first letters"),
             block(DONE), j("final_answer", text="Implemented abbreviate."))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(ASK)
    assert (exercise / "acronym.py").read_text() == DONE
    assert sum("is the same as before" in r for r in results(result)) == 1 and len(srv.requests) == 5
