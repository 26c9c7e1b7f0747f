"""Issue 27, speed: after the agent's own edits the answer is asked plainly, and a small model's compression writes
no model summary (agent/loop/plain_answer.py, agent/profile.py ``model_summaries``). On 2 cores each of those calls
processed the whole transcript (4,000 prompt tokens and more: 60-80 s) to write two sentences or a summary that
invented constraints. The scripted provider plays the model; the tests are real unittest runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.model_caller import AUX_SYSTEM
from agentls.agent.scripted import Reply, ScriptedServer, text
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
