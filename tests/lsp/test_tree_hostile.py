"""Hostile arguments to agent/rewind, agent/setMode, agent/forkSession and agent/deleteSession: each a clear
``-32602``, nothing changed, the server still answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from agentls.agent.scripted import ScriptedServer, text

from .conftest import initialize, new_session, request
from .editor import Editor


async def test_bad_arguments_to_the_session_tree_methods(editor: Editor, srv: ScriptedServer,
                                                         workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(text("hi"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "say hi"})
    bad: list[tuple[str, dict[str, Any]]] = [
        ("agent/rewind", {"sessionId": sid, "turns": 0}), ("agent/rewind", {"sessionId": sid, "turns": -1}),
        ("agent/rewind", {"sessionId": sid, "turns": "1"}), ("agent/rewind", {"sessionId": sid, "turns": 1.5}),
        ("agent/rewind", {"sessionId": sid, "turns": True}), ("agent/rewind", {"sessionId": sid, "turns": 10**30}),
        ("agent/rewind", {"sessionId": sid, "turns": 5}), ("agent/rewind", {"sessionId": sid, "force": "yes"}),
        ("agent/rewind", {"sessionId": 7}), ("agent/setMode", {"sessionId": sid, "mode": "PLAN"}),
        ("agent/setMode", {"sessionId": sid, "mode": ["plan"]}), ("agent/forkSession", {"sessionId": sid,
                                                                                      "atMessageId": 3}),
        ("agent/deleteSession", {"sessionId": None}), ("agent/deleteSession", {"sessionId": "../" * 50}),
    ]
    for method, params in bad:
        with pytest.raises(JsonRpcException) as info:
            await request(editor, method, params)
        assert info.value.code == -32602, (method, params, info.value)
    srv.push(text("still here"))
    answer = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "are you there?"})
    assert answer["finalResponse"] == "still here"
    assert "say hi" in " ".join(str(m["content"]) for m in srv.requests[-1].messages if m["role"] == "user")
