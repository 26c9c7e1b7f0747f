"""A streamed model call cut part-way and retried, seen through the real LSP face as ``agent/update``
notifications (docs/protocol.md "Message ids and retries"), on the OpenAI chat and Anthropic wires."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, cut_stream, text
from tests.stream_chunks import Shown, shown_chunks

from .conftest import initialize, new_session, request
from .editor import Editor

ANSWER = text("Hello brave new world", reasoning="think about it")
CUT_IN_TEXT = {"openai": 5, "anthropic": 10}  # SSE frames up to and including the text delta "Hello "


def chunks(editor: Editor, sid: str) -> Shown:
    return shown_chunks(n["update"] for n in editor.seen.updates if n["sessionId"] == sid)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_a_cut_stream_retried_shows_each_thought_and_text_once(editor: Editor, srv: ScriptedServer,
                                                                     workspace: Path, wire: str) -> None:
    url = srv.openai_url if wire == "openai" else srv.anthropic_url
    await initialize(editor, srv, workspace, options={"provider": wire, "baseUrl": url, "maxRetries": 2,
                                                      "retryBaseDelay": 0.01, "retryMaxDelay": 0.05})
    sid = await new_session(editor)
    srv.push(cut_stream(CUT_IN_TEXT[wire], ANSWER), ANSWER)
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "hi"})
    assert result["finalResponse"] == "Hello brave new world" and len(srv.requests) == 2
    assert chunks(editor, sid) == [
        ("thought", "think ", 0, None), ("thought", "about ", 0, None), ("thought", "it", 0, None),
        ("text", "Hello ", 0, None), ("text", "brave ", 0, None), ("text", "new ", 0, None), ("text", "world", 0, None)]

    srv.push(cut_stream(CUT_IN_TEXT[wire], ANSWER), text("Hi there", reasoning="think again"))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "again"})
    assert result["finalResponse"] == "Hi there"
    assert chunks(editor, sid)[7:] == [
        ("thought", "think ", 1, None), ("thought", "about ", 1, None), ("thought", "it", 1, None),
        ("text", "Hello ", 1, None), ("thought", "think again", 2, 1), ("text", "Hi ", 2, None),
        ("text", "there", 2, None)]
