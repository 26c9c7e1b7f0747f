"""Recorded provider streams (tests/providers/corpus) through the real LSP face: a DeepSeek thinking-mode
tool loop and a Mistral content-array answer; a stream that makes the parser raise ends the turn failed."""

from __future__ import annotations

from pathlib import Path

from agentls.agent.scripted import ScriptedServer, replay
from agentls.agent.scripted.replies import Reply
from agentls.agent.transcript import violations

from .conftest import initialize, new_session, request, streamed_text
from .editor import Editor

CORPUS = Path(__file__).resolve().parents[1] / "providers" / "corpus"


def thoughts(editor: Editor, sid: str) -> str:
    return "".join(u["update"]["content"]["text"] for u in editor.seen.updates
                   if u["sessionId"] == sid and u["update"]["sessionUpdate"] == "agent_thought_chunk")


async def test_a_deepseek_reasoning_tool_loop_then_a_mistral_content_array(editor: Editor, srv: ScriptedServer,
                                                                            workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(replay(CORPUS / "deepseek/reasoning-tool-call.chunks.txt"),
             replay(CORPUS / "mistral/content-array-thinking.chunks.txt"))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "weather in SF, then 2+2?"})
    assert result["exitReason"] == "text_response" and result["finalResponse"] == "2 + 2 = 4"
    assert [r.rejected for r in srv.requests] == [None, None]
    sent_back = next(m for m in srv.requests[1].messages if m["role"] == "assistant")
    assert sent_back["reasoning_content"].startswith("The user is asking for the weather")
    shown = thoughts(editor, sid)
    assert shown.count("The user is asking for the weather") == 1
    assert shown.count("This is basic arithmetic") == 1
    assert streamed_text(editor, sid) == "2 + 2 = 4"


async def test_a_stream_that_makes_the_parser_raise_ends_the_turn_failed(editor: Editor, srv: ScriptedServer,
                                                                          workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    nested = "data: " + "[" * 100_000 + "\n\n"  # json.loads raises RecursionError, not ValueError
    srv.push(Reply(recorded=nested), Reply(recorded=nested))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "hi"})
    assert result["exitReason"] == "failed" and result["failed"] is True  # the editor saw the end of the turn
    assert "format_error" in str(result)
    loaded = await request(editor, "agent/loadSession", {"sessionId": sid})
    assert loaded["messages"] and not violations(loaded["messages"])  # the transcript is valid
