"""Recorded provider streams (tests/providers/corpus) through the real ACP face: a DeepSeek thinking-mode
tool loop whose next request must carry reasoning_content back, and a Mistral content-array answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block
from acp_harness.agent import Agent

from agentls.agent.scripted import ScriptedServer, replay

pytestmark = pytest.mark.asyncio(loop_scope="module")

CORPUS = Path(__file__).resolve().parents[1] / "providers" / "corpus"


def _texts(updates: list[dict], kind: str) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == kind)


async def test_a_deepseek_reasoning_tool_loop_then_a_mistral_content_array(frames_ok: Agent,
                                                                            scripted: ScriptedServer,
                                                                            ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(replay(CORPUS / "deepseek/reasoning-tool-call.chunks.txt"),
                  replay(CORPUS / "mistral/content-array-thinking.chunks.txt"))
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block("weather in SF, then 2+2?")])
    assert response.stop_reason == "end_turn"
    assert [r.rejected for r in scripted.requests] == [None, None]
    sent_back = next(m for m in scripted.requests[1].messages if m["role"] == "assistant")
    assert sent_back["reasoning_content"].startswith("The user is asking for the weather")

    ups = agent.client.updates[sid]
    thoughts = _texts(ups, "agent_thought_chunk")
    assert thoughts.count("The user is asking for the weather") == 1  # DeepSeek's, once
    assert thoughts.count("This is basic arithmetic") == 1  # Mistral's thinking part, once
    answer = _texts(ups, "agent_message_chunk")
    assert answer == agent.client.text(sid)
    # The recorded weather tool is not ours: its call failed, and the end of the turn says so.
    assert answer == "2 + 2 = 4\n\n_(agentls: no files changed; 1 tool call failed; the last tool call failed)_\n"
    assert any(u["sessionUpdate"] == "tool_call" for u in ups)
