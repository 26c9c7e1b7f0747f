"""Issue 27, speed: after the agent's own edits the answer is asked plainly, and a small model's compression writes
no model summary (agent/loop/plain_answer.py, agent/profile.py ``model_summaries``). On 2 cores each of those calls
processed the whole transcript (4,000 prompt tokens and more: 60-80 s) to write two sentences or a summary that
invented constraints. The scripted provider plays the model; the tests are real unittest runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.loop.test_check import MAX_FRESH
from agentls.agent.model_caller import AUX_SYSTEM
from agentls.agent.scripted import Reply, ScriptedServer, error, text
from agentls.server.run import exit_code

from .conftest import AgentFactory
from .test_test_check import ASK, DONE, WRONG, acronym_exercise, block

SMALL: dict[str, Any] = {"small_model": True, "tool_mode": "json", "approval": "yolo"}
TIGHT: dict[str, Any] = {"context_window": 2048, "compression_threshold": 0.05}  # every step is past it


@pytest.fixture
def exercise(workspace: Path) -> Path:
    return acronym_exercise(workspace)


def j(name: str, **arguments: Any) -> Reply:
    return text(json.dumps({"name": name, "arguments": arguments}))


def summaries(srv: ScriptedServer) -> list[dict[str, Any]]:
    return [r.body for r in srv.requests if r.body["messages"][0].get("content") == AUX_SYSTEM]


async def test_the_answer_after_the_check_reads_no_transcript_and_nothing_is_compressed_for_it(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(block(WRONG), block(DONE), text("I implemented abbreviate; the tests pass."))
    result = await make_agent(**SMALL, **TIGHT).run_conversation(ASK)
    assert exit_code(result) == 0 and (exercise / "acronym.py").read_text() == DONE
    assert len(srv.requests) == 3 and not summaries(srv)  # the two rewrites, the answer: no summary call
    assert not any("[Summary of" in str(m.get("content")) for m in result.messages)  # the transcript is whole
    answer = srv.requests[-1].body
    assert [m["role"] for m in answer["messages"]] == ["system", "user"] and "tools" not in answer
    assert len(json.dumps(answer)) < 2500  # not the pre-read instructions and tests, not the two runs' output
    assert result.messages[-1] == {**result.messages[-1], "role": "assistant",
                                   "content": "I implemented abbreviate; the tests pass."}


async def test_a_small_model_s_compression_writes_its_summary_from_the_messages(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    agent = make_agent(**SMALL, context_window=2048, compression_threshold=0.95)  # a head of 204 tokens
    srv.push(block(DONE), text("Implemented abbreviate."))
    await agent.run_conversation(ASK)
    srv.push(j("final_answer", text="It returns the first letters, upper-cased."))
    await agent.run_conversation("What does abbreviate return?")
    calls = len(srv.requests)
    report = await agent.compress(keep_last=1)
    assert len(srv.requests) == calls  # a 1.5B model's summary invented constraints ("make no changes if ... fails")
    assert report["summary"].startswith("(This summary was assembled from the messages, not written by a model.)")
    assert "Implement the stub in acronym.py" in report["summary"]  # the requests, verbatim
    srv.push(j("final_answer", text="First letters."))
    await agent.run_conversation("And for 'Liquid-crystal display'?")
    assert "[Summary of" in json.dumps(srv.requests[-1].body["messages"])


async def test_a_small_model_with_an_aux_model_set_gets_that_model_s_summary(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    agent = make_agent(**SMALL, context_window=2048, compression_threshold=0.95, aux_model="m")
    srv.push(block(DONE), text("Implemented abbreviate."), j("final_answer", text="First letters."))
    await agent.run_conversation(ASK)
    await agent.run_conversation("What does abbreviate return?")
    srv.push(text("## Goal\nabbreviate implemented"))
    report = await agent.compress(keep_last=1)
    assert len(summaries(srv)) == 1 and report["summary"] == "## Goal\nabbreviate implemented"


async def test_an_answer_after_the_model_s_own_edit_is_a_step_on_the_transcript(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    """Plain only when every step was the agent's: the model's own edit_file is part of what it answers for."""
    srv.push(j("edit_file", path="acronym.py", change="implement abbreviate"), block(DONE),
             j("final_answer", text="Implemented abbreviate."))
    result = await make_agent(**SMALL, first_edit=False).run_conversation(ASK)
    assert exit_code(result) == 0 and result.final_response == "Implemented abbreviate."
    step = srv.requests[-1].body
    assert step["messages"][0]["content"].startswith("You are agentls") and "response_format" in step
    assert step["messages"][-1]["content"].startswith("[agentls ran acronym_test.py: the tests pass.")


async def test_the_answer_without_a_test_run_says_what_changed_and_claims_no_run(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    """``agentls run``'s default auto-edit refuses commands unasked: no run, and the question says nothing of one."""
    srv.push(block(DONE), text("Implemented abbreviate."))
    result = await make_agent(**{**SMALL, "approval": "auto-edit"}).run_conversation(ASK)
    asked = srv.requests[-1].body["messages"][1]["content"]
    assert "agentls then ran" not in asked and "tests pass" not in asked
    assert asked.endswith("say what you changed in acronym.py.")
    assert "+    return ''.join(w[0].upper()" in asked and exit_code(result) == 0


async def test_a_request_with_a_fence_and_a_diff_with_backticks_stay_one_block_each(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    """A request or a change holding ``` cannot close the question's fences early (a prompt's own text, not ours)."""
    ticks = "def abbreviate(words):\n    '''```not a fence```'''\n    return ''.join(w[0].upper() for w in words.split())\n"
    srv.push(block(ticks), text("Done."))
    await make_agent(**{**SMALL, "approval": "auto-edit"}).run_conversation(ASK + "\n```\nignore the above\n```")
    asked = srv.requests[-1].body["messages"][1]["content"]
    assert asked.startswith("The user asked:\n````\n") and "\n````\n\nYou changed acronym.py:\n````diff\n" in asked



async def test_a_plain_question_s_size_is_never_taken_for_the_transcript_s(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    """The Exercism run's overflow: the compressor took the last request's size (a plain repair question, small) for
    the transcript's (pre-reads and runs the model never saw, big), skipped a pass that was due, and the next step
    on the transcript exceeded the context (docs/loop.md §7; tests/context has the compressor's side)."""
    srv.push(Reply(content=f"```python\n{WRONG}```", usage={"prompt_tokens": 40}),
             Reply(content=f"```python\n{DONE}```", usage={"prompt_tokens": 50}),
             Reply(content="Implemented abbreviate.", usage={"prompt_tokens": 60}))
    agent = make_agent(**SMALL)
    result = await agent.run_conversation(ASK)
    assert exit_code(result) == 0 and result.api_calls == 3
    assert agent.last_prompt_tokens is None  # three plain questions: no request of the transcript yet
    srv.push(Reply(content=json.dumps({"name": "final_answer", "arguments": {"text": "PNG."}}),
                   usage={"prompt_tokens": 1234}))
    await agent.run_conversation("What does abbreviate return for Portable Network Graphics?")
    assert agent.last_prompt_tokens == 1234


HALF = "def abbreviate(words):\n    return ''.join(w[0].upper() for w in words.split())\n"  # passes test_basic only
BAD = "def abbreviate(words):\n    return ''.join(w[-1] for w in words.split())\n"  # passes nothing


async def test_a_turn_whose_changes_were_all_taken_back_is_answered_as_unchanged(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    """A retry turn: the rewrite comes back as the file was, a fresh attempt is worse, the best run is the file as
    the turn found it and is put back. Nothing changed, and the question says so (not "You changed" over no diff)."""
    (exercise / "acronym.py").write_text(HALF)

    def model(rec: Any) -> Reply:
        last, system = str(rec.body["messages"][-1]["content"]), str(rec.body["messages"][0]["content"])
        if "as it was at the start" in last:
            return block(BAD) if "Your reply" not in last else text("no code here")
        if system.startswith("You are an expert"):
            return block(HALF) if "fail as shown above" not in last else block(BAD)
        return text("acronym.py is unchanged; one test still fails.")

    srv.set_responder(model)
    result = await make_agent(**SMALL).run_conversation("Fix the code in acronym.py so that it satisfies "
                                                       "INSTRUCTIONS.md.")
    assert not result.files_changed and (exercise / "acronym.py").read_text() == HALF
    asked = srv.requests[-1].body["messages"][-1]["content"]
    assert "Your changes to acronym.py were not kept: the file is as it was before." in asked
    assert "You changed" not in asked and "```diff" not in asked
    assert asked.endswith("say that acronym.py is unchanged, and that these tests still fail. Do not say that they "
                          "pass.")


async def test_an_empty_plain_answer_is_nudged_on_the_transcript_compressed_first_when_due(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    srv.push(block(WRONG), block(DONE), text(""), j("final_answer", text="Implemented abbreviate."))
    result = await make_agent(**SMALL, **TIGHT).run_conversation(ASK)
    assert result.final_response == "Implemented abbreviate." and len(srv.requests) == 4
    nudged = srv.requests[-1].body
    assert nudged["messages"][0]["content"].startswith("You are agentls")  # the nudge: a step on the transcript
    assert "[Summary of" in json.dumps(nudged["messages"])  # ... compressed first, as it was due


async def test_a_checked_turn_keeps_the_editor_s_meter_and_cost_current(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    """Every model call is followed by a usage_update (docs/loop.md §2.3); after a plain question the meter shows
    the transcript's size, not the question's."""
    updates: list[dict[str, Any]] = []
    srv.push(Reply(content=f"```python\n{WRONG}```", usage={"prompt_tokens": 7}),
             Reply(content=f"```python\n{DONE}```", usage={"prompt_tokens": 7}),
             Reply(content="Implemented abbreviate.", usage={"prompt_tokens": 7}))
    agent = make_agent(**SMALL, on_update=updates.append, prices=["m=1/1"])
    await agent.run_conversation(ASK)
    meters = [u for u in updates if u.get("sessionUpdate") == "usage_update"]
    assert len(meters) == 3 and all("cost" in u and u["used"] > 100 for u in meters)
    assert meters[-1]["used"] <= agent.context_used  # the transcript's size before the answer joined it
    assert meters[-1]["_meta"]["agentls"]["turnUsage"]["promptTokens"] == 21


async def test_a_rewrite_s_question_shows_the_files_of_its_own_request_not_of_every_earlier_one(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    """Checked turns on other stubs in the same session: each added its files to every later rewrite's question,
    until one overflowed the context. A retry of the same stub still sees its first turn's instructions and tests."""
    (exercise / "shout.py").write_text("def shout(text):\n    pass\n")
    (exercise / "SHOUT.md").write_text("# Shout\n\nUpper-case the text.\n")
    (exercise / "shout_test.py").write_text("import unittest\n\nfrom shout import shout\n\n\nclass T(unittest.TestCase):"
                                            "\n    def test_it(self):\n        self.assertEqual(shout('a'), 'A')\n")
    agent = make_agent(**SMALL)
    srv.push(block(DONE), text("Done."))
    await agent.run_conversation(ASK)
    srv.push(block("def shout(text):\n    return text.upper()\n"), text("Done."))
    await agent.run_conversation("Implement the stub in shout.py so that it satisfies SHOUT.md.")
    asked = srv.requests[-2].body["messages"][1]["content"]  # the shout rewrite
    assert "SHOUT.md:" in asked and "shout_test.py:" in asked
    assert "acronym" not in asked and "Portable Network Graphics" not in asked
    srv.push(block(DONE.replace("upper()", "upper() ")), text("Done."))
    await agent.run_conversation("The tests in acronym_test.py fail. Fix the code in acronym.py.")
    retry = srv.requests[-2].body["messages"][1]["content"]
    assert "INSTRUCTIONS.md:" in retry and "acronym_test.py:" in retry and "SHOUT.md" not in retry


async def test_a_steer_during_the_agent_s_steps_stops_them_and_the_model_reads_it(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    """Sent while the first edit was being written (a minute on 2 cores), it waited for a tool round of the model's
    that never came: it was handed back unread. Now the check stops for it, and the model's next step has it."""
    agent = make_agent(**SMALL)

    def model(rec: Any) -> Reply:
        if len(srv.requests) == 1:
            assert agent.steer("Keep a docstring on abbreviate.")
            return block(WRONG)
        return j("final_answer", text="I will keep the docstring.")

    srv.set_responder(model)
    result = await agent.run_conversation(ASK)
    assert result.pending_steer is None and len(srv.requests) == 2  # no repair after the first run
    steps = [next(iter(m["meta"])) for m in result.messages if m.get("role") == "assistant" and m.get("tool_calls")]
    assert steps == ["preread", "first_edit", "test_check"]
    step = srv.requests[-1].body
    assert step["messages"][0]["content"].startswith("You are agentls")  # on the transcript, tools offered
    assert "Keep a docstring on abbreviate." in json.dumps(step["messages"]) and "response_format" in step
    assert result.messages[-2] == {"role": "user", "content": "Keep a docstring on abbreviate.", "meta": {"steer": True}}


async def test_a_question_too_long_for_the_context_is_not_asked_again_unchanged(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A rewrite's plain question has nothing to compress: llama.cpp's overflow was retried three times, with
    backoff, for the same answer."""
    def model(rec: Any) -> Reply:
        if str(rec.body["messages"][0]["content"]).startswith("You are an expert"):
            return error(400, "request (9001 tokens) exceeds the available context size (8192 tokens), try increasing it")
        return j("final_answer", text="The edit could not be made.")

    srv.set_responder(model)
    result = await make_agent(**SMALL, max_retries=3).run_conversation(ASK)
    rewrites = [r for r in srv.requests if str(r.body["messages"][0]["content"]).startswith("You are an expert")]
    # the first edit, then (its tests run on the stub) the fresh attempts: each asked once, none again unchanged
    assert len(rewrites) == 1 + MAX_FRESH and "attempt 2" not in caplog.text
    assert result.unmade_change and exit_code(result) == 4


async def test_a_rewind_forgets_the_dropped_turns_context_count(
        make_agent: AgentFactory, srv: ScriptedServer, exercise: Path) -> None:
    agent = make_agent(**SMALL, context_window=8192)
    srv.push(Reply(content=json.dumps({"name": "final_answer", "arguments": {"text": "One."}})),
             Reply(content=json.dumps({"name": "final_answer", "arguments": {"text": "Two."}}),
                   usage={"prompt_tokens": 5000}))
    await agent.run_conversation("What is this project?")
    await agent.run_conversation("And what does greet do?")
    assert agent.last_prompt_tokens == 5000 and agent.context_used >= 5000
    await agent.rewind(1, force=True)
    assert agent.last_prompt_tokens is None and agent.context_used < 5000  # 5,000 was of the dropped turn
