"""agent/newSession and agent/turn end to end: result shape, updates, queueing, parallel sessions."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import initialize, new_session, request, update_kinds
from .editor import Editor

TURN_KEYS = {"sessionId", "finalResponse", "completed", "apiCalls", "exitReason", "interrupted", "failed",
             "partial", "usage"}


async def test_turn_returns_the_protocol_result_and_streams_updates(editor: Editor, srv: ScriptedServer,
                                                                     workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"})), text("It greets the world."))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "What does app.py do?"})
    assert TURN_KEYS <= set(result)
    assert result["sessionId"] == sid
    assert result["finalResponse"] == "It greets the world."
    assert result["completed"] is True and result["exitReason"] == "text_response"
    assert result["apiCalls"] == 2
    assert set(result["usage"]) == {"promptTokens", "completionTokens", "cachedTokens"}
    kinds = update_kinds(editor, sid)
    assert "tool_call" in kinds and "tool_call_update" in kinds and "agent_message_chunk" in kinds
    tool_result = srv.requests[1].messages[-1]
    assert tool_result["role"] == "tool" and "hello " in tool_result["content"]


async def test_turns_on_one_session_queue_and_sessions_run_in_parallel(editor: Editor, srv: ScriptedServer,
                                                                      workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    a, b = await new_session(editor), await new_session(editor)
    loop = asyncio.get_running_loop()

    srv.push(text("a1", latency=1.5), text("b1", latency=1.5))
    start = loop.time()
    ra, rb = await asyncio.gather(request(editor, "agent/turn", {"sessionId": a, "prompt": "first on a"}),
                                  request(editor, "agent/turn", {"sessionId": b, "prompt": "first on b"}))
    parallel = loop.time() - start
    assert {ra["finalResponse"], rb["finalResponse"]} == {"a1", "b1"}
    assert parallel < 2.8, f"two sessions took {parallel:.2f}s: they did not run in parallel"

    srv.push(text("a2", latency=0.5), text("a3", latency=0.5))
    start = loop.time()
    r2, r3 = await asyncio.gather(request(editor, "agent/turn", {"sessionId": a, "prompt": "second on a"}),
                                  request(editor, "agent/turn", {"sessionId": a, "prompt": "third on a"}))
    queued = loop.time() - start
    assert (r2["finalResponse"], r3["finalResponse"]) == ("a2", "a3")
    assert queued >= 1.0, f"two turns of one session overlapped ({queued:.2f}s)"
    users = [m["content"] for m in srv.requests[-1].messages if m["role"] == "user"]
    assert users[-3:] == ["first on a", "second on a", "third on a"]


async def test_content_block_prompts(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(text("seen"))
    prompt = [{"type": "text", "text": "look at this"},
              {"type": "resource", "resource": {"uri": "file:///x.py", "text": "print(1)"}}]
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": prompt, "taskId": "t-1"})
    assert result["completed"]
    assert "print(1)" in srv.requests[0].last_user_text  # type: ignore[operator]


async def test_new_session_takes_cwd_and_system_message(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sub = workspace / "sub"
    sub.mkdir()
    sid = await new_session(editor, cwd=str(sub), systemMessage="Always answer in French.")
    srv.push(text("bonjour"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "hi"})
    system = srv.requests[0].system or ""
    assert "Always answer in French." in system and str(sub) in system
