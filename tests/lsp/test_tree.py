"""agent/forkSession, agent/rewind, agent/setMode (plan mode, kept across processes) and agent/deleteSession."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import initialize, new_session, request
from .editor import Editor


def _users(srv: ScriptedServer) -> str:
    return " ".join(str(m["content"]) for m in srv.requests[-1].messages if m["role"] == "user")


async def test_a_fork_carries_the_history_and_the_original_never_sees_its_turns(
        editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(text("pelicans fly"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "tell me about pelicans"})
    forked = await request(editor, "agent/forkSession", {"sessionId": sid})
    fid = forked["sessionId"]
    assert fid != sid and forked["forkedFrom"] == sid and forked["title"] == "tell me about pelicans (fork)"
    srv.push(text("otters swim"))
    await request(editor, "agent/turn", {"sessionId": fid, "prompt": "now otters, in the fork"})
    assert "pelicans" in _users(srv)
    srv.push(text("more pelicans"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "more on pelicans"})
    assert "pelicans" in _users(srv) and "otters" not in _users(srv)
    loaded = await request(editor, "agent/loadSession", {"sessionId": sid})
    answer = next(m for m in loaded["messages"] if m["role"] == "assistant")
    at = await request(editor, "agent/forkSession", {"sessionId": sid, "atMessageId": answer["meta"]["messageId"]})
    srv.push(text("first only"))
    await request(editor, "agent/turn", {"sessionId": at["sessionId"], "prompt": "where were we?"})
    assert "tell me about pelicans" in _users(srv) and "more on pelicans" not in _users(srv)
    for bad in ({"sessionId": sid, "atMessageId": "msg_unknown"}, {"sessionId": "no-such-session"}):
        with pytest.raises(JsonRpcException) as info:
            await request(editor, "agent/forkSession", bad)
        assert info.value.code == -32602


async def test_rewind_puts_the_file_back_and_refuses_over_a_later_edit(editor: Editor, srv: ScriptedServer,
                                                                      workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    app = workspace / "app.py"
    original = app.read_text()
    sid = await new_session(editor)
    srv.push(text("hi"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "say hi"})
    srv.push(tools(call("read_file", {"path": "app.py"}),
                   call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "bye"})), text("done"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "change greet"})
    assert "bye" in (editor.text(app) or "")  # applied through workspace/applyEdit
    uri = app.as_uri()
    line = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    editor.type_into(uri, [{"range": line, "newText": "# the user's line\n"}])  # the user edits it since
    with pytest.raises(JsonRpcException) as info:
        await request(editor, "agent/rewind", {"sessionId": sid})
    assert info.value.code == -32602 and "app.py" in info.value.message
    assert (editor.text(app) or "").startswith("# the user's line")
    with pytest.raises(JsonRpcException) as info:
        await request(editor, "agent/rewind", {"sessionId": sid, "turns": 3})
    assert "only 2 turn(s)" in info.value.message
    editor.type_into(uri, [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
                            "newText": ""}])  # and takes it back
    result = await request(editor, "agent/rewind", {"sessionId": sid, "turns": 1})
    assert result["files"] == [{"path": "app.py", "action": "restored", "added": 1, "removed": 1}]
    assert editor.text(app) == original
    loaded = await request(editor, "agent/loadSession", {"sessionId": sid})
    assert [m["role"] for m in loaded["messages"]] == ["user", "assistant"]


async def test_plan_mode_refuses_edits_unasked_and_survives_a_new_process(
        editor: Editor, other_editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    assert await request(editor, "agent/setMode", {"sessionId": sid, "mode": "plan"}) == {"mode": "plan"}
    srv.push(tools(call("read_file", {"path": "app.py"}),
                   call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "bye"})), text("plan"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "plan the change"})
    assert not editor.seen.edits
    results = [m for m in srv.requests[-1].messages if m["role"] == "tool"]
    assert "hello" in str(results[0]["content"]) and "plan mode" in str(results[1]["content"])
    assert not editor.seen.permissions
    with pytest.raises(JsonRpcException):
        await request(editor, "agent/setMode", {"sessionId": sid, "mode": "sometimes"})

    await initialize(other_editor, srv, workspace)  # another server process, the same store
    loaded = await request(other_editor, "agent/loadSession", {"sessionId": sid})
    assert loaded["mode"] == "plan"
    srv.push(tools(call("write_file", {"path": "new.py", "content": "x = 1\n"})), text("still planning"))
    await request(other_editor, "agent/turn", {"sessionId": sid, "prompt": "write it"})
    assert not other_editor.seen.edits and not (workspace / "new.py").exists()


async def test_delete_session(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(text("ok"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "keep me briefly"})
    assert await request(editor, "agent/deleteSession", {"sessionId": sid}) == {"deleted": [sid]}
    listed = await request(editor, "agent/listSessions", {"cwd": str(workspace)})
    assert sid not in [s["sessionId"] for s in listed["sessions"]]
    with pytest.raises(JsonRpcException) as info:
        await request(editor, "agent/deleteSession", {"sessionId": sid})
    assert info.value.code == -32602
