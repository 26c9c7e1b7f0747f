"""agent/newSession and agent/turn end to end: result shape, updates, queueing, parallel sessions."""

from __future__ import annotations

from pathlib import Path

from agent.scripted import ScriptedServer, call, text, tools

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
