"""A streamed call that fails part-way and is made again (docs/loop.md §4.2, "What the editor was shown"):
the editor never sees a thought or a text twice, and ends with exactly the stored message."""

from __future__ import annotations

import json

import pytest

from agentls.agent.scripted import Reply, ScriptedServer, call, cut_stream, error, reset, text, tools

from tests.stream_chunks import CHUNKS, Shown, shown_chunks

from .conftest import AgentFactory
from .helpers import Updates, check

ANSWER = text("Hello brave new world", reasoning="think about it")


def shown(updates: Updates) -> Shown:
    """The chunks as ``(kind, text, message number, number of the message it replaces)``."""
    return shown_chunks(updates.items)


def editor_view(updates: Updates) -> tuple[str, str]:
    """``(thought, text)`` as a client that honours ``_meta.agentls.replaces`` ends up showing them."""
    void: set[str] = set()
    for u in updates.items:
        replaces = (u.get("_meta") or {}).get("agentls", {}).get("replaces")
        if replaces:
            void.add(replaces)
    kept = [u for u in updates.items if u["sessionUpdate"] in CHUNKS and u["messageId"] not in void]
    return ("".join(u["content"]["text"] for u in kept if u["sessionUpdate"] == "agent_thought_chunk"),
            "".join(u["content"]["text"] for u in kept if u["sessionUpdate"] == "agent_message_chunk"))


def sse_error_body(wire: str, before: list[str]) -> str:
    """A 200 stream that sends ``before`` as text deltas, then an error event (overloaded)."""
    if wire == "openai":
        frames = [{"id": "c1", "object": "chat.completion.chunk", "model": "m",
                   "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}}]} for piece in before]
        body = "".join(f"data: {json.dumps(f)}\n\n" for f in frames)
        return body + 'data: {"error": {"message": "overloaded, try again", "type": "server_error"}}\n\n'
    events = [("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": None,
        "usage": {"input_tokens": 5, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}})]
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": piece}}) for piece in before]
    events.append(("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


# How many SSE frames carry the thought and "Hello " on each wire (docs/scripted-provider.md).
CUT_IN_TEXT = {"openai": 5, "anthropic": 10}
CUT_IN_THOUGHT = {"openai": 3, "anthropic": 4}


async def test_a_retry_that_repeats_the_answer_sends_only_what_is_new(make_agent: AgentFactory,
                                                                      srv: ScriptedServer, wire: str,
                                                                      updates: Updates) -> None:
    srv.push(cut_stream(CUT_IN_TEXT[wire], ANSWER), ANSWER)
    result = check(await make_agent(wire).run_conversation("hi"))
    assert len(srv.requests) == 2 and result.final_response == "Hello brave new world"
    assert shown(updates) == [("thought", "think ", 0, None), ("thought", "about ", 0, None),
                              ("thought", "it", 0, None), ("text", "Hello ", 0, None),
                              ("text", "brave ", 0, None), ("text", "new ", 0, None), ("text", "world", 0, None)]
    assert updates.thought_text() == "think about it" and updates.message_text() == result.final_response


async def test_a_retry_cut_inside_the_thought(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                              updates: Updates) -> None:
    srv.push(cut_stream(CUT_IN_THOUGHT[wire], ANSWER), cut_stream(CUT_IN_THOUGHT[wire] + 1, ANSWER), ANSWER)
    result = check(await make_agent(wire).run_conversation("hi"))
    assert len(srv.requests) == 3
    assert [t for _, t, _, _ in shown(updates)] == ["think ", "about ", "it", "Hello ", "brave ", "new ", "world"]
    assert {m for _, _, m, _ in shown(updates)} == {0}
    assert updates.message_text() == result.final_response


async def test_a_retry_with_another_answer_replaces_the_shown_part(make_agent: AgentFactory, srv: ScriptedServer,
                                                                   wire: str, updates: Updates) -> None:
    srv.push(cut_stream(CUT_IN_TEXT[wire], ANSWER), text("Hi there", reasoning="think again"))
    result = check(await make_agent(wire).run_conversation("hi"))
    assert result.final_response == "Hi there"
    assert shown(updates) == [("thought", "think ", 0, None), ("thought", "about ", 0, None),
                              ("thought", "it", 0, None), ("text", "Hello ", 0, None),
                              ("thought", "think again", 1, 0),  # "think " repeated, then "again" differed
                              ("text", "Hi ", 1, None), ("text", "there", 1, None)]
    assert editor_view(updates) == ("think again", "Hi there")


async def test_a_retry_that_ends_short_of_the_shown_part_voids_it(make_agent: AgentFactory, srv: ScriptedServer,
                                                                  wire: str, updates: Updates) -> None:
    srv.push(cut_stream(CUT_IN_TEXT[wire], ANSWER), text("Hello", reasoning="think about it"))
    result = check(await make_agent(wire).run_conversation("hi"))
    assert result.final_response == "Hello"
    assert shown(updates)[4:] == [("thought", "think about it", 1, 0), ("text", "Hello", 1, None)]
    assert editor_view(updates) == ("think about it", "Hello")


async def test_a_retry_that_answers_with_a_tool_call_only(make_agent: AgentFactory, srv: ScriptedServer,
                                                          wire: str, updates: Updates) -> None:
    srv.push(cut_stream(CUT_IN_TEXT[wire], ANSWER), tools(call("list_dir", {})), text("done"))
    result = check(await make_agent(wire).run_conversation("hi"))
    assert result.final_response == "done"
    chunks = shown(updates)
    assert chunks[4] == ("text", "", 1, 0)  # the marker alone: the shown thought and text are void
    assert chunks[5:] == [("text", "done", 2, None)]
    assert editor_view(updates) == ("", "done")


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "nostream"])
async def test_a_fallback_after_a_partial_answer(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                                 stream: bool, updates: Updates) -> None:
    srv.push(cut_stream(CUT_IN_TEXT[wire], ANSWER) if stream else error(503), model="m")
    srv.push(text("Hello brave new world", reasoning="think about it"), model="backup")
    result = check(await make_agent(wire, stream, max_retries=0, fallback_models=["backup"]).run_conversation("hi"))
    assert [r.model for r in srv.requests] == ["m", "backup"]
    assert updates.thought_text() == "think about it" and updates.message_text() == result.final_response
    assert all(replaces is None for *_, replaces in shown(updates))


async def test_a_fallback_model_with_another_answer(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                                    updates: Updates) -> None:
    srv.push(cut_stream(CUT_IN_TEXT[wire], ANSWER), model="m")
    srv.push(text("Backup here"), model="backup")
    result = check(await make_agent(wire, max_retries=0, fallback_models=["backup"]).run_conversation("hi"))
    assert result.final_response == "Backup here"
    assert shown(updates)[4:] == [("text", "Backup ", 1, 0), ("text", "here", 1, None)]
    assert editor_view(updates) == ("", "Backup here")


@pytest.mark.parametrize("fault", ["error event", "reset"])
async def test_a_mid_stream_failure_then_a_retry(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                                 fault: str, updates: Updates) -> None:
    first = (Reply(recorded=sse_error_body(wire, ["Hello ", "brave "])) if fault == "error event"
             else reset("during", content="Hello brave new world"))
    srv.push(first, text("Hello brave new world"))
    result = check(await make_agent(wire).run_conversation("hi"))
    assert len(srv.requests) == 2 and result.final_response == "Hello brave new world"
    assert updates.message_text() == "Hello brave new world"
    assert {m for _, _, m, _ in shown(updates)} == {0}


async def test_every_call_of_a_turn_is_its_own_message(make_agent: AgentFactory, srv: ScriptedServer,
                                                       updates: Updates) -> None:
    srv.push(tools(call("list_dir", {}), content="Looking."), text("Done."))
    check(await make_agent().run_conversation("hi"))
    assert [(t, m) for _, t, m, _ in shown(updates)] == [("Looking.", 0), ("Done.", 1)]


