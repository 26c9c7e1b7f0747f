"""Stop reasons: end_turn, max_turn_requests, refusal, an empty answer, and failures as JSON-RPC errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp_harness.agent import Agent, write_config

from agentls.agent.scripted import ScriptedServer, call, empty, error, text, tools
from agentls.agent.scripted.replies import Reply

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _prompt(agent: Agent, sid: str, words: str = "go") -> str:
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block(words)])
    return response.stop_reason


async def test_end_turn_and_the_title(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(text("hi"))
    assert await _prompt(agent, sid, "Fix the flaky test\nin module x") == "end_turn"
    await agent.client.wait_for(lambda: "session_info_update" in agent.client.kinds(sid))
    info = next(u for u in agent.client.updates[sid] if u["sessionUpdate"] == "session_info_update" and "title" in u)
    assert info["title"] == "Fix the flaky test"


async def test_budget_runs_out(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    write_config(ws, max_iterations=2)
    sid = await agent.new_session(ws)
    scripted.push(tools(call("list_dir", {})), tools(call("list_dir", {})), text("summary of what I did"))
    assert await _prompt(agent, sid) == "max_turn_requests"
    assert agent.client.text(sid).endswith("summary of what I did")
    scripted.push(text("fresh budget"))
    assert await _prompt(agent, sid) == "end_turn"


async def test_content_filter_is_a_refusal(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(Reply(content="", finish_reason="content_filter"))
    assert await _prompt(agent, sid) == "refusal"
    scripted.push(text("fine again"))
    assert await _prompt(agent, sid) == "end_turn"


async def test_empty_answer_ends_the_turn_with_a_note(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(empty(), empty(), empty(), empty())
    assert await _prompt(agent, sid) == "end_turn"
    assert "empty answer" in agent.client.text(sid)


async def test_provider_failure_is_an_error_and_the_session_survives(frames_ok: Agent, scripted: ScriptedServer,
                                                                   ws: Path) -> None:
    agent = frames_ok
    write_config(ws, max_retries=0)
    sid = await agent.new_session(ws)
    scripted.push(error(500, "the model server fell over"))
    with pytest.raises(RequestError) as info:
        await _prompt(agent, sid)
    assert info.value.code == -32603
    assert info.value.data["category"] == "server_error" and "fell over" in str(info.value)
    scripted.push(error(401, "bad key"))
    with pytest.raises(RequestError) as auth:
        await _prompt(agent, sid)
    assert auth.value.code == -32000 and auth.value.data["category"] == "auth"
    scripted.push(text("recovered"))
    assert await _prompt(agent, sid) == "end_turn"
