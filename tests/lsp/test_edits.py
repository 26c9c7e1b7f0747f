"""Edits through workspace/applyEdit, reads from the synced buffers, refusals and the disk fallback."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import initialize, new_session, request
from .editor import Editor


def tool_results(srv: ScriptedServer, index: int) -> list[str]:
    return [str(m.get("content")) for m in srv.requests[index].messages if m.get("role") == "tool"]


async def test_edit_of_an_open_buffer_is_a_versioned_minimal_text_edit_and_reads_come_back_from_it(
        editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    app = workspace / "app.py"
    uri = editor.open(app)
    # An unsaved change in the editor: the disk still has the old text.
    editor.type_into(uri, [{"range": {"start": {"line": 4, "character": 6}, "end": {"line": 4, "character": 11}},
                            "newText": "greet('wörld 🌍')"}])
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"}), call("edit_file", {"path": "app.py", "old_string": "'hello '", "new_string": "'hi '"})),
             tools(call("read_file", {"path": "app.py"})),
             text("Changed the greeting."))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "say hi instead"})
    assert result["completed"], result
    [edit] = editor.seen.edits
    [change] = edit["edit"]["documentChanges"]
    assert change["textDocument"] == {"uri": uri, "version": 2}
    [text_edit] = change["edits"]
    assert text_edit["range"] == {"start": {"line": 1, "character": 13}, "end": {"line": 1, "character": 17}}
    assert text_edit["newText"] == "i"
    buffer = editor.text(app)
    assert buffer is not None and "'hi ' + name" in buffer and "wörld 🌍" in buffer
    assert "hello" in app.read_text() and "wörld" not in app.read_text()  # nothing was saved
    read_back = tool_results(srv, 2)[-1]
    assert "'hi ' + name" in read_back and "wörld 🌍" in read_back


async def test_a_new_file_is_created_then_filled(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(tools(call("write_file", {"path": "pkg/new.py", "content": "VALUE = 1\n"})),
             tools(call("read_file", {"path": "pkg/new.py"})), text("created"))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "make a module"})
    assert result["completed"]
    changes = editor.seen.edits[0]["edit"]["documentChanges"]
    target = (workspace / "pkg/new.py").as_uri()
    assert changes[0]["kind"] == "create" and changes[0]["uri"] == target
    assert changes[1]["textDocument"] == {"uri": target, "version": None}
    assert changes[1]["edits"][0]["newText"] == "VALUE = 1\n"
    assert editor.text(workspace / "pkg/new.py") == "VALUE = 1\n"
    assert "VALUE = 1" in tool_results(srv, 2)[-1]


async def test_a_file_that_is_not_open_gets_an_unversioned_edit(editor: Editor, srv: ScriptedServer,
                                                                workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "notes.md"}), call("edit_file", {"path": "notes.md", "old_string": "- two", "new_string": "- two\n- three"})),
             text("added"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "add a third note"})
    [change] = editor.seen.edits[0]["edit"]["documentChanges"]
    assert change["textDocument"]["version"] is None
    assert editor.text(workspace / "notes.md") == "# Notes\n\n- one\n- two\n- three\n"


async def test_a_refused_edit_is_reported_to_the_model(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    editor.accept_edits = False
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"}), call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "bye"})),
             text("ok, leaving it"))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "change it"})
    assert result["completed"]
    [_, message] = tool_results(srv, 1)
    assert "the user rejected this edit" in message
    assert "hello" in (workspace / "app.py").read_text()
    failed = [u["update"] for u in editor.seen.updates if u["update"].get("status") == "failed"]
    assert failed, "the tool call is reported as failed"


async def test_reads_right_after_an_edit_see_it_before_the_editor_reports_the_change(
        editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    uri = editor.open(workspace / "app.py")
    sent_later: list[Any] = []
    original = editor.text_document_did_change

    def slow_did_change(params: Any) -> None:  # the editor reports its changes a second late
        sent_later.append(params)
        asyncio.get_running_loop().call_later(1.0, original, params)
    editor.text_document_did_change = slow_did_change  # type: ignore[method-assign]
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"}), call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "howdy"})),
             tools(call("read_file", {"path": "app.py"})), text("done"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "howdy"})
    assert sent_later and sent_later[0].text_document.uri == uri
    assert "howdy" in tool_results(srv, 2)[-1]


async def test_neovim_profile_gets_document_changes(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, profile="neovim", agent={"updates": True})
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"}), call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "hey"})), text("ok"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "hey"})
    assert "documentChanges" in editor.seen.edits[0]["edit"]


async def test_a_client_that_cannot_apply_edits_gets_disk_writes(editor: Editor, srv: ScriptedServer,
                                                                 workspace: Path) -> None:
    await initialize(editor, srv, workspace, profile="bare", agent=None)
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"}), call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "hey"}),
                   call("write_file", {"path": "docs/new.txt", "content": "fresh\n"})), text("ok"))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "edit on disk"})
    assert result["completed"]
    assert editor.seen.edits == []
    assert "'hey ' + name" in (workspace / "app.py").read_text()
    assert (workspace / "docs/new.txt").read_text() == "fresh\n"


async def test_an_editor_that_never_answers_cannot_hang_the_turn(editor: Editor, srv: ScriptedServer,
                                                                 workspace: Path) -> None:
    await initialize(editor, srv, workspace, options={"clientTimeout": 1})
    editor.hold_edits = True
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"}), call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "bye"})),
             text("the editor is not answering"))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "change it"}, timeout=20)
    assert result["completed"]
    [_, message] = tool_results(srv, 1)
    assert "did not answer" in message and "1 s" in message and "not applied" in message


async def _two_edits_with_late_did_change(editor: Editor, srv: ScriptedServer, workspace: Path,
                                          delay: float) -> list[Any]:
    await initialize(editor, srv, workspace)
    uri = editor.open(workspace / "app.py")
    original = editor.text_document_did_change

    def late(params: Any) -> None:
        asyncio.get_running_loop().call_later(delay, original, params)
    editor.text_document_did_change = late  # type: ignore[method-assign]
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"}), call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "howdy"}),
                   call("edit_file", {"path": "app.py", "old_string": "world", "new_string": "planet"}),
                   call("read_file", {"path": "app.py"})),
             text("done"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "two edits"})
    assert "howdy" in (editor.text(workspace / "app.py") or "") and "planet" in (editor.text(workspace / "app.py")
                                                                                or "")
    results = tool_results(srv, 1)
    assert all("not applied" not in r for r in results)
    assert "howdy" in results[-1] and "planet" in results[-1]  # read back before the editor reported them
    return [e["edit"]["documentChanges"][0]["textDocument"]["version"] for e in editor.seen.edits[-2:]] + [uri]


async def test_a_second_edit_waits_for_the_editor_to_report_the_first(editor: Editor, srv: ScriptedServer,
                                                                     workspace: Path) -> None:
    versions = await _two_edits_with_late_did_change(editor, srv, workspace, 0.2)
    assert versions[:2] == [1, 2]


async def test_a_second_edit_is_unversioned_if_the_editor_stays_silent(editor: Editor, srv: ScriptedServer,
                                                                       workspace: Path) -> None:
    versions = await _two_edits_with_late_did_change(editor, srv, workspace, 3.0)
    assert versions[:2] == [1, None]
