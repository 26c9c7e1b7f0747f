"""``_session/steering`` and the ``_agentls/*`` extension methods."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp_harness.agent import Agent

from agentls.agent.scripted import ScriptedServer, call, stall, text, tools

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _user_texts(scripted: ScriptedServer) -> list[str]:
    return [str(m["content"]) for m in scripted.requests[-1].messages if m["role"] == "user"]


async def test_steer_is_injected_into_the_running_turn(frames_ok: Agent, scripted: ScriptedServer,
                                                       ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(call("terminal", {"command": "sleep 1"})), text("steered answer"))
    turn = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("start")]))
    await agent.client.wait_for(lambda: "terminal/create" in agent.client.methods())
    answer = await agent.conn.ext_method("session/steering",
                                         {"sessionId": sid, "prompt": [{"type": "text", "text": "use tabs"}]})
    assert answer == {"outcome": "injected"}
    response = await asyncio.wait_for(turn, 10)
    assert response.stop_reason == "end_turn"
    assert _user_texts(scripted)[-1] == "use tabs"  # delivered after the tool round, inside the same turn
    assert len(scripted.requests) == 2


async def test_steer_on_an_idle_session_starts_a_turn(frames_ok: Agent, scripted: ScriptedServer,
                                                      ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(text("answer to the steer"))
    answer = await agent.conn.ext_method("session/steering", {"sessionId": sid, "prompt": "look at README"})
    assert answer == {"outcome": "startedNewTurn"}
    await agent.client.wait_for(lambda: agent.client.text(sid) == "answer to the steer")
    ups = agent.client.updates[sid]
    user = next(u for u in ups if u["sessionUpdate"] == "user_message_chunk")
    assert user["content"]["text"] == "look at README"
    assert _user_texts(scripted) == ["look at README"]


async def test_steer_while_the_prompt_is_starting_runs_as_a_follow_up(frames_ok: Agent, scripted: ScriptedServer,
                                                                      ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(stall(0.5, content="first"), text("second"))
    turn = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("one")]))
    await agent.client.wait_for(lambda: len(scripted.requests) == 1)
    answer = await agent.conn.ext_method("session/steering", {"sessionId": sid, "prompt": "and two"})
    assert answer == {"outcome": "injected"}
    response = await asyncio.wait_for(turn, 10)
    assert response.stop_reason == "end_turn"
    assert agent.client.text(sid) == "firstsecond"
    assert _user_texts(scripted) == ["one", "and two"]
    assert any(u["sessionUpdate"] == "user_message_chunk" for u in agent.client.updates[sid])


async def test_steer_outcomes_without_a_turn(frames_ok: Agent, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    unknown = await agent.conn.ext_method("session/steering", {"sessionId": "nope", "prompt": "x"})
    assert unknown["outcome"] == "failed"
    empty = await agent.conn.ext_method("session/steering", {"sessionId": sid, "prompt": "  "})
    assert empty["outcome"] == "failed"
    idle = await agent.conn.ext_method("session/steering", {
        "sessionId": sid, "prompt": "x", "_meta": {"steering": {"idleBehavior": "promptRequired"}}})
    assert idle == {"outcome": "promptRequired", "reason": "noRunningTurn"}
    with pytest.raises(RequestError) as info:
        await agent.conn.ext_method("session/steering", {"sessionId": sid, "prompt": 42})
    assert info.value.code == -32602


@pytest.mark.parametrize("method", ["agentls/cancel", "agentls/interrupt"])
async def test_cancel_extension(frames_ok: Agent, scripted: ScriptedServer, ws: Path, method: str) -> None:
    """``_agentls/cancel`` is ``session/cancel`` with an answer; ``_agentls/interrupt``, its first name, still
    works for existing clients."""
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(stall(30, content="slow"))
    turn = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("go")]))
    await agent.client.wait_for(lambda: len(scripted.requests) == 1)
    assert await agent.conn.ext_method(method, {"sessionId": sid}) == {"cancelled": True, "interrupted": True}
    assert (await asyncio.wait_for(turn, 5)).stop_reason == "cancelled"
    assert await agent.conn.ext_method(method, {"sessionId": sid}) == {"cancelled": False, "interrupted": False}


async def test_compress_extension(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(text("hello"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("hi")])
    report = await agent.conn.ext_method("agentls/compress", {"sessionId": sid, "preview": True})
    assert {"tokensBefore", "tokensAfter", "messagesBefore", "messagesAfter"} <= set(report)
    with pytest.raises(RequestError) as info:
        await agent.conn.ext_method("agentls/compress", {"sessionId": sid, "keepLast": "two"})
    assert info.value.code == -32602


async def test_unknown_extension_method(frames_ok: Agent) -> None:
    with pytest.raises(RequestError) as info:
        await frames_ok.conn.ext_method("agentls/teleport", {"sessionId": "x"})
    assert info.value.code == -32601 and "_session/steering" in str(info.value)
