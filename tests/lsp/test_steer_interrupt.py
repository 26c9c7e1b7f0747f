"""agent/steer and agent/interrupt while a turn runs, between turns, and the pendingSteer follow-up."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import initialize, new_session, request, streamed_text, until
from .editor import Editor

NO_TERMINAL = {"updates": True, "permissions": True}


async def test_steer_mid_turn_is_queued_and_delivered_after_the_tool_round(editor: Editor, srv: ScriptedServer,
                                                                           workspace: Path) -> None:
    await initialize(editor, srv, workspace, agent=NO_TERMINAL)
    sid = await new_session(editor)
    srv.push(tools(call("terminal", {"command": "sleep 0.5; echo slept"})), text("done, in French"))
    tool_started = asyncio.Event()
    editor.on_update = lambda p: tool_started.set() if p["update"]["sessionUpdate"] == "tool_call" else None
    turn = asyncio.ensure_future(request(editor, "agent/turn", {"sessionId": sid, "prompt": "run the slow thing"}))
    await asyncio.wait_for(tool_started.wait(), 10)
    steered = await request(editor, "agent/steer", {"sessionId": sid, "text": "answer in French"})
    assert steered == {"outcome": "queued"}
    result = await turn
    assert result["completed"] and "pendingSteer" not in result
    second = srv.requests[1].messages
    assert second[-2]["role"] == "tool" and "slept" in second[-2]["content"]
    assert second[-1] == {"role": "user", "content": "answer in French"}


async def test_steer_between_turns_starts_a_new_turn(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(text("started by a steer"))
    assert await request(editor, "agent/steer", {"sessionId": sid, "text": "check the tests"}) == \
        {"outcome": "startedNewTurn"}
    await until(lambda: "started by a steer" in streamed_text(editor, sid), what="the new turn's answer")
    assert srv.requests[0].last_user_text == "check the tests"


async def test_a_steer_the_turn_could_not_take_runs_as_a_follow_up_in_the_same_request(
        editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(text("final answer", latency=1.0), text("follow-up answer"), text("queued answer"))
    turn = asyncio.ensure_future(request(editor, "agent/turn", {"sessionId": sid, "prompt": "one"}))
    await until(lambda: len(srv.requests) == 1, what="the provider call")
    assert await request(editor, "agent/steer", {"sessionId": sid, "text": "and also two"}) == {"outcome": "queued"}
    queued = asyncio.ensure_future(request(editor, "agent/turn", {"sessionId": sid, "prompt": "three"}))
    result = await turn
    assert result["finalResponse"] == "follow-up answer" and "pendingSteer" not in result
    assert result["completed"] and result["apiCalls"] == 2
    assert (await queued)["finalResponse"] == "queued answer"
    # The follow-up ran before the turn queued behind it, and the stream shows the steer between the answers.
    assert [r.last_user_text for r in srv.requests] == ["one", "and also two", "three"]
    shown = "".join(f"[{u['content']['text']}]" if u["sessionUpdate"] == "user_message_chunk" else
                    u["content"]["text"] for u in (p["update"] for p in editor.seen.updates if p["sessionId"] == sid)
                    if u["sessionUpdate"] in ("agent_message_chunk", "user_message_chunk"))
    assert shown == "final answer[and also two]follow-up answerqueued answer"  # prompts the client sent: not echoed


async def test_interrupt_stops_the_turn_at_once(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(text("too late", latency=30))
    turn = asyncio.ensure_future(request(editor, "agent/turn", {"sessionId": sid, "prompt": "slow"}))
    await until(lambda: len(srv.requests) == 1, what="the provider call")
    assert await request(editor, "agent/interrupt", {"sessionId": sid}) == {"interrupted": True}
    result = await asyncio.wait_for(turn, 5)
    # The model call was aborted, not waited for: the provider saw the client leave before its reply.
    await until(lambda: srv.requests[0].client_disconnected, what="the aborted model call")
    assert result["interrupted"] is True and result["exitReason"] == "interrupted" and not result["completed"]
    assert await request(editor, "agent/interrupt", {"sessionId": sid}) == {"interrupted": False}
    srv.push(text("next turn is fine"))
    after = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "again"})
    assert after["finalResponse"] == "next turn is fine"


async def test_a_steer_left_by_an_interrupt_is_returned_not_run(editor: Editor, srv: ScriptedServer,
                                                                workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(text("never", latency=30))
    turn = asyncio.ensure_future(request(editor, "agent/turn", {"sessionId": sid, "prompt": "slow"}))
    await until(lambda: len(srv.requests) == 1, what="the provider call")
    assert (await request(editor, "agent/steer", {"sessionId": sid, "text": "also this"}))["outcome"] == "queued"
    await request(editor, "agent/interrupt", {"sessionId": sid})
    result = await asyncio.wait_for(turn, 10)
    assert result["interrupted"] and result["pendingSteer"] == "also this"
    await asyncio.sleep(0.5)
    assert len(srv.requests) == 1  # no turn was started with it
