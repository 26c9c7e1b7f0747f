"""session/cancel: the turn ends ``cancelled`` in any phase, and the session keeps working."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import text_block
from acp_harness.agent import Agent

from agentls.agent.scripted import ScriptedServer, call, stall, text, tools

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _next_prompt_works(agent: Agent, scripted: ScriptedServer, sid: str) -> None:
    scripted.push(text("still here"))
    response = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=[text_block("again")]), 10)
    assert response.stop_reason == "end_turn"
    assert agent.client.text(sid).endswith("still here")


async def test_cancel_mid_tool_then_prompt_again(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(call("terminal", {"command": "sleep 30"})))
    turn = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("wait a while")]))
    await agent.client.wait_for(lambda: "terminal/wait_for_exit" in agent.client.methods())
    await agent.conn.cancel(session_id=sid)
    response = await asyncio.wait_for(turn, 10)
    assert response.stop_reason == "cancelled"
    methods = agent.client.methods()
    assert methods.index("terminal/kill") < methods.index("terminal/release")
    term = list(agent.client.terminals.values())[-1]  # this test's command
    assert term.released and term.process.returncode == -9  # killed for the cancel, not waited for: the sleep never ended
    failed = [u for u in agent.client.updates[sid] if u["sessionUpdate"] == "tool_call_update"
              and u.get("status") == "failed"]
    assert failed, "the interrupted tool call is reported as failed"
    await _next_prompt_works(agent, scripted, sid)
    history = scripted.requests[-1].messages
    assert any(m["role"] == "tool" and "interrupted" in str(m["content"]) for m in history)


async def test_cancel_while_the_model_streams(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(stall(30, content="a slow answer"))
    turn = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("hi")]))
    await agent.client.wait_for(lambda: len(scripted.requests) == 1)
    await asyncio.sleep(0.2)
    await agent.conn.cancel(session_id=sid)
    response = await asyncio.wait_for(turn, 5)
    assert response.stop_reason == "cancelled"
    scripted.clear()  # the stalled reply may not have been asked for
    await _next_prompt_works(agent, scripted, sid)


@pytest.mark.parametrize("client_answer", ["wait", "ignore"])
async def test_cancel_resolves_a_pending_permission(frames_ok: Agent, scripted: ScriptedServer, ws: Path,
                                                    client_answer: str) -> None:
    """A compliant client answers ``cancelled``; one that never answers must not hang the turn either."""
    agent = frames_ok
    sid = await agent.new_session(ws)
    agent.client.answers.append(client_answer)
    scripted.push(tools(call("write_file", {"path": "x.txt", "content": "x"})))
    turn = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("write")]))
    await agent.client.wait_for(lambda: agent.client.permission_requests)
    await agent.conn.cancel(session_id=sid)
    agent.client.release_waiting()
    response = await asyncio.wait_for(turn, 5)
    assert response.stop_reason == "cancelled"
    assert not (ws / "x.txt").exists()
    await _next_prompt_works(agent, scripted, sid)


async def test_cancel_on_an_idle_session_does_not_poison_the_next_prompt(frames_ok: Agent,
                                                                        scripted: ScriptedServer,
                                                                        ws: Path) -> None:
    """Clients send a best-effort cancel before their next prompt (the "stop and send" pattern)."""
    agent = frames_ok
    sid = await agent.new_session(ws)
    await agent.conn.cancel(session_id=sid)
    await _next_prompt_works(agent, scripted, sid)


async def test_cancel_also_cancels_a_queued_prompt(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(stall(30, content="slow"))
    first = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("one")]))
    await agent.client.wait_for(lambda: len(scripted.requests) == 1)
    second = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("two")]))
    await asyncio.sleep(0.2)
    await agent.conn.cancel(session_id=sid)
    answers = await asyncio.wait_for(asyncio.gather(first, second), 5)
    assert [a.stop_reason for a in answers] == ["cancelled", "cancelled"]
    assert len(scripted.requests) == 1, "the queued prompt never reached the model"
    await _next_prompt_works(agent, scripted, sid)


async def test_cancel_during_slow_session_start(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    """A cancel that lands before the core turn runs (setup, first request) still ends the prompt."""
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(stall(30, content="slow"))
    turn = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("one")]))
    await asyncio.sleep(0)  # the prompt is on its way; the cancel follows right behind it
    await agent.conn.cancel(session_id=sid)
    response = await asyncio.wait_for(turn, 5)
    assert response.stop_reason == "cancelled"
    scripted.clear()  # the stalled reply may not have been asked for
    await _next_prompt_works(agent, scripted, sid)
