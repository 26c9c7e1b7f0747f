"""docs/loop.md §2: one turn (serialization, system prompt, persistence order, runtime context, reasoning, streaming)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

from agentls.agent.agent import AIAgent
from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, text, tools

from .conftest import AgentFactory, base_url
from .helpers import Updates, check, roles, turn_requests, user_texts, wait_until


def _db_rows(db: Path) -> list[tuple[str, str | None, str | None]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return list(conn.execute(
            "SELECT role, content, tool_calls FROM messages WHERE archived = 0 ORDER BY session_id, seq"))


async def test_turns_on_one_agent_run_in_arrival_order(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    agent = make_agent()
    srv.set_responder(lambda req: text(f"answer to {req.last_user_text}", latency=0.15))
    runs = []
    for name in ("first", "second", "third"):
        runs.append(asyncio.create_task(agent.run_conversation(name)))
        await asyncio.sleep(0.02)
    results = [check(r) for r in await asyncio.wait_for(asyncio.gather(*runs), 10)]
    assert [r.final_response for r in results] == ["answer to first", "answer to second", "answer to third"]
    assert [req.last_user_text for req in srv.requests] == ["first", "second", "third"]
    gaps = [b.received_at - a.received_at for a, b in zip(srv.requests, srv.requests[1:], strict=False)]
    assert all(g >= 0.14 for g in gaps), gaps  # never two turns of one agent at once
    assert roles(results[2].messages) == ["system"] + ["user", "assistant"] * 3


async def test_two_agents_never_block_each_other(srv: ScriptedServer, make_agent: AgentFactory) -> None:
    srv.push(text("x done", latency=0.5), model="x")
    srv.push(text("y done", latency=0.5), model="y")
    x, y = make_agent(model="x"), make_agent(model="y")
    start = time.monotonic()
    rx, ry = await asyncio.wait_for(asyncio.gather(x.run_conversation("go"), y.run_conversation("go")), 5)
    assert time.monotonic() - start < 0.9
    assert (check(rx).final_response, check(ry).final_response) == ("x done", "y done")


async def test_system_prompt_byte_identical_across_session_and_resume(
        srv: ScriptedServer, make_agent: AgentFactory, workspace: Path, tmp_path: Path, wire: str) -> None:
    """Built once per session, stored, and byte-identical on every request, after AGENTS.md changes and
    after the session is resumed by a new agent."""
    db = tmp_path / "s.db"
    (workspace / "AGENTS.md").write_text("Always answer in English.\n")
    agent = make_agent(wire, session_db=db)
    srv.push(tools(call("read_file", {"path": "README.md"})), text("one"))
    check(await agent.run_conversation("first turn", system_message="Be brief."))
    (workspace / "AGENTS.md").write_text("Now answer in French.\n")
    srv.push(tools(call("list_dir", {})), text("two"))
    check(await agent.run_conversation("second turn", system_message="Something else entirely."))
    await agent.close()
    resumed = make_agent(wire, session_db=db, session_id=agent.session_id)
    srv.push(text("three"))
    result = check(await resumed.run_conversation("third turn"))
    assert result.messages[0]["content"] == srv.requests[0].system
    raws = [r.system for r in srv.requests]
    assert len(raws) == 5 and raws[0] and "Always answer in English." in raws[0] and "Be brief." in raws[0]
    assert all(r == raws[0] for r in raws), "the system prompt changed within a session"
    assert [user_texts(r)[0] for r in srv.requests][-1] == "first turn"


async def test_user_turn_persisted_before_first_provider_call(srv: ScriptedServer, make_agent: AgentFactory,
                                                              tmp_path: Path, wire: str, stream: bool) -> None:
    """At each request the database already holds the user turn, and every earlier round whole."""
    db = tmp_path / "s.db"
    seen: list[list[tuple[str, str | None, str | None]]] = []

    def responder(req: RecordedRequest) -> Reply:
        seen.append(_db_rows(db) if db.exists() else [])
        if len(seen) == 1:
            return tools(call("read_file", {"path": "notes.txt"}))
        return text("done")

    srv.set_responder(responder)
    check(await make_agent(wire, stream, session_db=db).run_conversation("please persist me"))
    assert [(r[0], r[1]) for r in seen[0]] == [("user", "please persist me")]
    assert [r[0] for r in seen[1]] == ["user", "assistant", "tool"]
    assert seen[1][1][2] is not None and "read_file" in seen[1][1][2]
    assert "line 3" in (seen[1][2][1] or "")
    assert [r[0] for r in _db_rows(db)] == ["user", "assistant", "tool", "assistant"]


async def test_runtime_context_rides_only_on_the_current_user_message(
        srv: ScriptedServer, make_agent: AgentFactory, tmp_path: Path, wire: str) -> None:
    """Runtime context is on the copy of this turn's user message in every request of the turn (so the
    prompt prefix stays stable), never in the system prompt, the transcript, the database or later turns."""
    db = tmp_path / "s.db"
    ctx = "EDITOR-STATE: src/app.py is open at line 7"
    agent = make_agent(wire, session_db=db)
    srv.push(tools(call("read_file", {"path": "src/app.py"})), text("first"), text("second"))
    first = check(await agent.run_conversation("fix greet", runtime_context=ctx))
    second = check(await agent.run_conversation("and now add tests"))
    r1, r2, r3 = srv.requests
    for req in (r1, r2):
        assert ctx not in (req.system or "")
        carrying = [t for t in user_texts(req) if ctx in t]
        assert len(carrying) == 1 and "fix greet" in carrying[0]
    assert ctx not in r3.raw.decode()
    assert "fix greet" in user_texts(r3)
    for result in (first, second):
        assert all(ctx not in str(m.get("content")) for m in result.messages)
    assert all(ctx not in str(row) for row in _db_rows(db))


async def test_reasoning_kept_on_assistant_messages(srv: ScriptedServer, make_agent: AgentFactory, wire: str,
                                                     stream: bool, updates: Updates) -> None:
    srv.push(tools(call("list_dir", {}), reasoning="I should look at the files first."),
             text("All good.", reasoning="The listing answers it."))
    result = check(await make_agent(wire, stream).run_conversation("what is here?"))
    assistants = [m for m in result.messages if m["role"] == "assistant"]
    assert [a.get("reasoning") for a in assistants] == ["I should look at the files first.",
                                                        "The listing answers it."]
    assert assistants[1]["content"] == "All good."
    assert "The listing answers it." in updates.thought_text()
    if wire == "openai":  # internal keys never reach an OpenAI-compatible server
        assert all("reasoning" not in m and "meta" not in m for m in srv.requests[1].messages)


async def test_text_deltas_stream_to_the_callback(srv: ScriptedServer, make_agent: AgentFactory, wire: str,
                                                  stream: bool, updates: Updates) -> None:
    answer = "The quick brown fox jumps over the lazy dog, twice over."
    srv.push(text(answer, chunk_size=4))
    result = check(await make_agent(wire, stream).run_conversation("say it"))
    chunks = updates.of("agent_message_chunk")
    assert result.final_response == answer and updates.message_text() == answer
    assert len(chunks) >= (10 if stream else 1)


async def test_streamed_deltas_arrive_before_the_response_completes(srv: ScriptedServer, make_agent: AgentFactory,
                                                                    wire: str, updates: Updates) -> None:
    srv.push(text("one two three four five six", chunk_delay=0.05))
    agent = make_agent(wire, stream=True)
    turn = asyncio.create_task(agent.run_conversation("count"))
    await wait_until(lambda: len(updates.of("agent_message_chunk")) >= 2, timeout=3)
    assert not turn.done()
    assert check(await turn).final_response == "one two three four five six"


async def test_stored_message_model_is_openai_shaped_on_every_wire(srv: ScriptedServer, make_agent: AgentFactory,
                                                                   wire: str, stream: bool) -> None:
    srv.push(tools(call("read_file", {"path": "README.md"}), call("search_files", {"pattern": "def"})),
             text("done"))
    result = check(await make_agent(wire, stream).run_conversation("go"))
    calls = result.messages[2]["tool_calls"]
    assert [c["type"] for c in calls] == ["function", "function"]
    assert [c["function"]["name"] for c in calls] == ["read_file", "search_files"]
    assert all(isinstance(c["function"]["arguments"], str) for c in calls)
    assert [m["tool_call_id"] for m in result.messages[3:5]] == [c["id"] for c in calls]
    assert all(isinstance(m["content"], str) for m in result.messages[3:5])


async def test_prompt_content_blocks_are_normalized(srv: ScriptedServer, make_agent: AgentFactory,
                                                    wire: str) -> None:
    srv.push(text("ok"))
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]
    result = check(await make_agent(wire).run_conversation(blocks))
    joined = " ".join(user_texts(srv.requests[0]))
    assert "part one" in joined and "part two" in joined
    assert result.messages[1]["role"] == "user"


async def test_each_agent_has_its_own_lock(srv: ScriptedServer, workspace: Path) -> None:
    """Two agents on one event loop, one wire each, overlap their provider calls."""
    srv.push(text("a", latency=0.4), model="a")
    srv.push(text("b", latency=0.4), model="b")
    agents = [AIAgent(model="a", base_url=base_url(srv, "openai"), provider="openai", workspace=workspace),
              AIAgent(model="b", base_url=base_url(srv, "anthropic"), provider="anthropic", api_key="k",
                      workspace=workspace)]
    try:
        start = time.monotonic()
        results = await asyncio.wait_for(asyncio.gather(*(a.run_conversation("hi") for a in agents)), 5)
        assert time.monotonic() - start < 0.7
        assert [check(r).final_response for r in results] == ["a", "b"]
        assert len(turn_requests(srv.requests)) == 2
    finally:
        for a in agents:
            await a.close()
