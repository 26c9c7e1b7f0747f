"""agent/listSessions, agent/loadSession (replayed as updates first), agent/undo and agent/compress."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import initialize, new_session, request, until, update_kinds
from .editor import Editor


async def test_list_sessions(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    first, second = await new_session(editor), await new_session(editor)
    srv.push(text("about pelicans"), text("about otters"))
    await request(editor, "agent/turn", {"sessionId": first, "prompt": "tell me about pelicans"})
    await request(editor, "agent/turn", {"sessionId": second, "prompt": "tell me about otters"})
    listed = await request(editor, "agent/listSessions", {"cwd": str(workspace)})
    by_id = {s["sessionId"]: s for s in listed["sessions"]}
    assert {first, second} <= set(by_id)
    assert by_id[first]["title"] == "tell me about pelicans" and by_id[first]["cwd"] == str(workspace)
    assert by_id[first]["updatedAt"]
    assert [s["sessionId"] for s in listed["sessions"]][:2] == [second, first]  # newest first
    found = await request(editor, "agent/listSessions", {"query": "otters", "cwd": workspace.as_uri()})
    assert [s["sessionId"] for s in found["sessions"]] == [second]
    assert "nextCursor" not in found
    with pytest.raises(JsonRpcException) as info:
        await request(editor, "agent/listSessions", {"cursor": "not-a-cursor"})
    assert info.value.code == -32602 and "cursor" in info.value.message


async def test_load_session_in_another_editor_replays_then_answers(editor: Editor, other_editor: Editor,
                                                                    srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "notes.md"})), text("Two notes."))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "how many notes?"})

    await initialize(other_editor, srv, workspace)
    loaded = await request(other_editor, "agent/loadSession", {"sessionId": sid})
    kinds = update_kinds(other_editor, sid)  # already there when the answer arrived
    assert kinds == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    assert loaded["sessionId"] == sid
    assert [m["role"] for m in loaded["messages"]] == ["user", "assistant", "tool", "assistant"]
    srv.push(text("Still two."))
    result = await request(other_editor, "agent/turn", {"sessionId": sid, "prompt": "and now?"})
    assert result["finalResponse"] == "Still two."
    assert [m["role"] for m in srv.requests[-1].messages][-3:] == ["tool", "assistant", "user"]


async def test_undo_reverts_the_last_turn_through_apply_edit(editor: Editor, srv: ScriptedServer,
                                                             workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    app = workspace / "app.py"
    original = app.read_text()
    editor.open(app)
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"}),
                   call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "bye"}),
                   call("write_file", {"path": "extra.py", "content": "X = 1\n"})), text("done"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "change things"})
    assert "bye" in (editor.text(app) or "") and (workspace / "extra.py").exists()
    edits_before = len(editor.seen.edits)
    result = await request(editor, "agent/undo", {"sessionId": sid})
    assert sorted(result["restoredFiles"]) == ["app.py", "extra.py"]
    assert editor.text(app) == original
    assert not (workspace / "extra.py").exists()
    kinds = [c.get("kind", "edit") for e in editor.seen.edits[edits_before:] for c in e["edit"]["documentChanges"]]
    assert sorted(kinds) == ["delete", "edit"]
    assert (await request(editor, "agent/undo", {"sessionId": sid, "turns": 1}))["restoredFiles"] == []


async def test_compress(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    for i in range(3):
        srv.push(text(f"answer {i} " + "words " * 50))
        await request(editor, "agent/turn", {"sessionId": sid, "prompt": f"question {i} " + "context " * 50})
    preview = await request(editor, "agent/compress", {"sessionId": sid, "keepLast": 1, "preview": True})
    assert {"tokensBefore", "tokensAfter", "messagesBefore", "messagesAfter"} <= set(preview)
    srv.push(text("GOAL: answer questions. DONE: three answers."))
    result = await request(editor, "agent/compress", {"sessionId": sid, "keepLast": 1, "focus": "the answers"})
    assert result["messagesAfter"] < result["messagesBefore"] and result["tokensAfter"] < result["tokensBefore"]
    assert "three answers" in result["summary"]
    assert "the answers" in (srv.requests[-1].last_user_text or "")
    statuses = [u["update"]["status"] for u in editor.seen.updates
                if u["update"]["sessionUpdate"] == "compaction_update"]
    assert statuses == ["in_progress", "completed"]


async def test_compress_during_a_turn_happens_at_its_next_boundary(editor: Editor, srv: ScriptedServer,
                                                                   workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    for i in range(2):
        srv.push(text(f"answer {i}"))
        await request(editor, "agent/turn", {"sessionId": sid, "prompt": f"question {i}"})
    srv.push(text("slow answer", latency=1.0), text("SUMMARY"))
    turn = asyncio.ensure_future(request(editor, "agent/turn", {"sessionId": sid, "prompt": "question 2"}))
    await until(lambda: len(srv.requests) == 3, what="the turn's provider call")
    compressed = await request(editor, "agent/compress", {"sessionId": sid, "keepLast": 1})
    assert compressed["messagesAfter"] < compressed["messagesBefore"]
    assert (await turn)["finalResponse"] == "slow answer"
