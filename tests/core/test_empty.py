"""docs/loop.md §3/§4: empty responses — one nudge after tool results, never persisted, then ``empty_response``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.agent.scripted import RecordedRequest, ScriptedServer, call, empty, text, tools
from agentls.agent.sessions.store import SessionStore

from .conftest import AgentFactory
from .helpers import check, user_texts


def _extra_user_texts(req: RecordedRequest, transcript: list[dict[str, Any]]) -> list[str]:
    """User-side texts the request carried that are not in the persisted transcript (nudges, scaffolding)."""
    persisted = [str(m.get("content")) for m in transcript if m.get("role") == "user"]
    return [t for t in user_texts(req) if t not in persisted]


async def test_one_nudge_after_tool_results(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                            stream: bool) -> None:
    srv.push(tools(call("read_file", {"path": "README.md"})), empty(), text("here you go"))
    result = check(await make_agent(wire, stream).run_conversation("summarize the README"))
    assert result.completed and result.final_response == "here you go"
    reqs = srv.requests
    assert len(reqs) == 3
    assert _extra_user_texts(reqs[1], result.messages) == []
    nudges = _extra_user_texts(reqs[2], result.messages)
    assert len(nudges) == 1, user_texts(reqs[2])
    nudge = nudges[0]
    assert all(nudge not in str(m.get("content")) for m in result.messages)


async def test_nudge_never_persisted_nor_sent_again(make_agent: AgentFactory, srv: ScriptedServer,
                                                    tmp_path: Path, wire: str) -> None:
    db = tmp_path / "s.db"
    agent = make_agent(wire, session_db=db)
    srv.push(tools(call("list_dir", {})), empty(), text("done"), tools(call("list_dir", {})), text("again"))
    first = check(await agent.run_conversation("first"))
    nudge = _extra_user_texts(srv.requests[2], first.messages)[0]
    second = check(await agent.run_conversation("second"))
    assert second.final_response == "again"
    for req in srv.requests[3:]:
        assert nudge.encode() not in req.raw
        assert _extra_user_texts(req, second.messages) == []
    async with SessionStore(db) as store:
        stored = await store.load_messages(agent.session_id)
    assert all(nudge not in str(m.get("content")) for m in stored)
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"] * 2


async def test_further_empties_are_retried_with_at_most_one_nudge_then_reported(
        make_agent: AgentFactory, srv: ScriptedServer, wire: str, stream: bool) -> None:
    """Demanding reading of "one nudge ... further empties are retried": the nudge text is sent in exactly
    one request; the retries after it do not repeat it."""
    srv.push(tools(call("list_dir", {})))
    srv.set_responder(lambda req: empty())
    result = check(await make_agent(wire, stream).run_conversation("go"))
    assert result.exit_reason == "empty_response" and result.completed is False
    reqs = srv.requests
    assert len(reqs) >= 3, "an empty answer after the nudge is retried before giving up"
    assert len(reqs) <= 8
    nudged = [r for r in reqs if _extra_user_texts(r, result.messages)]
    assert len(nudged) == 1, f"{len(nudged)} requests carried a nudge"
    assert result.messages[-1]["role"] in ("tool", "assistant")


async def test_empty_first_reply_is_retried(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                            stream: bool) -> None:
    srv.push(empty(), text("second try worked"))
    result = check(await make_agent(wire, stream).run_conversation("hello"))
    assert result.final_response == "second try worked" and len(srv.requests) == 2
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant"]


async def test_only_empties_end_with_empty_response(make_agent: AgentFactory, srv: ScriptedServer,
                                                    wire: str) -> None:
    srv.set_responder(lambda req: empty())
    result = check(await make_agent(wire).run_conversation("hello"))
    assert result.exit_reason == "empty_response" and result.completed is False
    assert not result.final_response
    assert 2 <= len(srv.requests) <= 6
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant"]
    assert result.messages[-1]["meta"] == {"placeholder": True}  # closes the unanswered turn
    srv.set_responder(None)
    srv.push(text("back"))
    agent_after = check(await make_agent(wire).run_conversation("again"))
    assert agent_after.final_response == "back"


async def test_whitespace_only_counts_as_empty(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    srv.push(tools(call("list_dir", {})), text("   \n  "), text("real answer"))
    result = check(await make_agent().run_conversation("go"))
    assert result.final_response == "real answer"
    assert [m.get("content") for m in result.messages if m["role"] == "assistant"][-1] == "real answer"


async def test_continuation_prompts_are_scaffolding(make_agent: AgentFactory, srv: ScriptedServer, tmp_path: Path,
                                                    wire: str, stream: bool) -> None:
    """An answer cut by the output limit is continued; the continuation prompt never reaches the transcript,
    the database or a later request, and the answer is stored as one assistant message."""
    db = tmp_path / "s.db"
    agent = make_agent(wire, stream, session_db=db)
    srv.push(text("The first half of the answer", finish_reason="length"), text(" and the second half."),
             text("next turn"))
    result = check(await agent.run_conversation("explain"))
    assert result.final_response == "The first half of the answer and the second half."
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant"]
    prompts = _extra_user_texts(srv.requests[1], result.messages)
    assert len(prompts) == 1
    later = check(await agent.run_conversation("and then?"))
    assert prompts[0].encode() not in srv.requests[2].raw
    assert _extra_user_texts(srv.requests[2], later.messages) == []
    async with SessionStore(db) as store:
        stored = await store.load_messages(agent.session_id)
    assert [m["role"] for m in stored] == ["user", "assistant", "user", "assistant"]
    assert all(prompts[0] not in str(m.get("content")) for m in stored)
