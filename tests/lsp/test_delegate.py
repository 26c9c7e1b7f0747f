"""delegate_task over LSP (docs/loop.md §9.9, docs/protocol.md "agent/update"): children's tool calls carry
``parentToolCallId``, a child's edit is a workspace/applyEdit after an agent/requestPermission, agent/undo
reverts it, and agent/interrupt stops the children."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from agentls.agent.scripted import ScriptedServer, call, text, tools
from tests.delegate_script import Router, is_child

from .conftest import initialize, new_session, request, until
from .editor import Editor

GOAL = "Rename the greeting"


async def test_a_child_edit_is_asked_applied_nested_and_undone(editor: Editor, srv: ScriptedServer,
                                                               workspace: Path) -> None:
    await initialize(editor, srv, workspace, options={"approval": "ask"})
    sid = await new_session(editor)
    before = (workspace / "app.py").read_text()
    srv.set_responder(Router(
        [tools(call("delegate_task", {"goal": GOAL, "toolsets": ["edit"]})), text("renamed")],
        {GOAL: [tools(call("read_file", {"path": "app.py"})),
                tools(call("edit_file", {"path": "app.py", "old_string": "'hello '", "new_string": "'hi '"})),
                text("changed hello to hi")]}))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "use a subagent"})
    assert result["completed"], result
    assert "'hi '" in (editor.text(workspace / "app.py") or "")  # the editor's buffer, through applyEdit
    assert len(editor.seen.edits) == 1
    [asked] = editor.seen.permissions
    updates = [u for u in editor.seen.updates if u["sessionId"] == sid]
    [card] = [u["update"] for u in updates if u["update"]["sessionUpdate"] == "tool_call"
              and u["update"]["kind"] == "think"]
    nested = [u for u in updates if u.get("parentToolCallId") == card["toolCallId"]]
    assert {u["update"]["sessionUpdate"] for u in nested} == {"tool_call", "tool_call_update"}
    assert asked["toolCall"]["toolCallId"] in {u["update"]["toolCallId"] for u in nested}
    assert all("parentToolCallId" not in u for u in updates if u not in nested)
    undone = await request(editor, "agent/undo", {"sessionId": sid})
    assert undone["restoredFiles"] == ["app.py"]
    assert editor.text(workspace / "app.py") == before and len(editor.seen.edits) == 2


async def test_interrupt_stops_the_children(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    goals = ["Slow one", "Slow two", "Slow three"]
    srv.set_responder(Router([tools(call("delegate_task", {"tasks": [{"goal": g} for g in goals]})), text("x")],
                             {g: [text("late", latency=30)] for g in goals}))
    turn = asyncio.ensure_future(request(editor, "agent/turn", {"sessionId": sid, "prompt": "wait"}))
    await until(lambda: len([r for r in srv.requests if is_child(r, goals)]) == 3, what="three children asking")
    count = len(srv.requests)
    started = time.monotonic()
    assert await request(editor, "agent/interrupt", {"sessionId": sid}) == {"interrupted": True}
    result = await asyncio.wait_for(turn, 5)
    assert time.monotonic() - started < 1.0
    assert result["exitReason"] == "interrupted", result
    await asyncio.sleep(0.3)
    assert len(srv.requests) == count
