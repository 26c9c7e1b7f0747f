"""What the editor sees reaches the model over the LSP face: agent/diagnostics (capability-negotiated),
the new problems after an edit in the same round, the selection and active file (agent/turn
``context``), @-mentions (resource_link) read from the buffers, and tool-call ids unique per session."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import FULL_AGENT, initialize, new_session, request
from .editor import Editor
from .raw import RawClient

WITH_DIAGNOSTICS = {**FULL_AGENT, "diagnostics": True}


def tool_results(srv: ScriptedServer, index: int = -1) -> list[str]:
    return [str(m.get("content")) for m in srv.requests[index].messages if m.get("role") == "tool"]


async def test_an_edit_that_breaks_the_syntax_shows_the_error_in_the_same_round(
        editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, agent=WITH_DIAGNOSTICS)
    uri = editor.open(workspace / "app.py")
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"})),
             tools(call("edit_file", {"path": "app.py", "old_string": "def greet(name):",
                                      "new_string": "def greet(name:"})), text("I broke it; fixing."))
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "change greet"})
    assert result["completed"], result
    edited = tool_results(srv, 2)[-1]
    assert edited.startswith("Edited app.py (+1 -1 lines)\n--- a/app.py")  # the diff, then the new problems
    assert "\n\nNew problems in app.py after this edit (1 error):\n" in edited
    assert "  app.py:1:10: error: '(' was never closed [python]" in edited
    # Asked before the edit (at once) and after it (letting the language servers settle).
    assert [(d["uris"], d["settleMs"], d["sessionId"]) for d in editor.seen.diagnostics] == \
        [([uri], 0, sid), ([uri], 1500, sid)]


async def test_the_diagnostics_tool_reads_the_editor(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, agent=WITH_DIAGNOSTICS)
    editor.open(workspace / "app.py", "def broken(:\n    pass\n")
    sid = await new_session(editor)
    srv.push(tools(call("diagnostics", {"path": "app.py"}), call("diagnostics", {"path": "notes.md"})), text("seen"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "any problems?"})
    broken, fine = tool_results(srv)
    assert broken.startswith("Problems (1 error):\n  app.py:1:12: error: ")
    assert fine == "No problems in notes.md."


@pytest.mark.parametrize("agent", [FULL_AGENT, None], ids=["no-capability", "no-agent"])
async def test_a_client_that_did_not_declare_diagnostics_is_never_asked(
        editor: Editor, srv: ScriptedServer, workspace: Path, agent: dict[str, bool] | None) -> None:
    await initialize(editor, srv, workspace, agent=agent)
    sid = await new_session(editor)
    srv.push(tools(call("write_file", {"path": "bad.py", "content": "x = (\n"})),
             tools(call("diagnostics", {"path": "bad.py"})), text("done"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "write"})
    assert tool_results(srv, 1) == ["Created bad.py (created, 1 lines)"]
    assert tool_results(srv, 2)[-1].startswith("error: diagnostics are unavailable")
    assert editor.seen.diagnostics == []


async def test_a_client_that_answers_method_not_found_is_asked_once(srv: ScriptedServer, workspace: Path) -> None:
    client = await RawClient.start()
    client.request_errors["agent/diagnostics"] = {"code": -32601, "message": "Method not found"}
    try:
        await client.initialize(workspace, {"model": "scripted", "baseUrl": srv.openai_url, "approval": "yolo",
                                            "titles": "prompt"},
                                capabilities={"experimental": {"agent": {"diagnostics": True}}})
        sid = (await client.call(1, "agent/newSession", {}))["result"]["sessionId"]
        srv.push(tools(call("write_file", {"path": "bad.py", "content": "x = (\n"})),
                 tools(call("diagnostics", {"path": "bad.py"})), text("done"))
        answer = await client.call(2, "agent/turn", {"sessionId": sid, "prompt": "write"}, timeout=60)
        assert answer["result"]["completed"], answer
        assert tool_results(srv, 1) == ["Created bad.py (created, 1 lines)"]
        assert tool_results(srv, 2)[-1].startswith("error: diagnostics are unavailable")
        assert [r["method"] for r in client.server_requests].count("agent/diagnostics") == 1
    finally:
        await client.close()


async def test_a_selection_asked_about_reaches_the_model(editor: Editor, srv: ScriptedServer,
                                                          workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(text("It builds a greeting."))
    context = {"activeFile": {"path": (workspace / "app.py").as_uri(), "languageId": "python",
                              "cursor": {"line": 1, "character": 4}},
               "selection": {"path": str(workspace / "app.py"), "languageId": "python",
                             "text": "    return 'hello ' + name\n",
                             "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}}}
    result = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "What does this do?",
                                                  "context": context})
    assert result["completed"], result
    sent = srv.requests[-1].last_user_text or ""
    assert sent.startswith("What does this do?\n\n<editor_context>\n")
    assert "The user's active file in the editor: app.py (python), cursor at line 2, column 5." in sent
    assert "The user's selection in app.py, line 2 (from line 2, column 1 to line 3, column 1):\n```python\n" \
           "    return 'hello ' + name\n" in sent


async def test_a_malformed_context_is_invalid_params(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    with pytest.raises(JsonRpcInvalidParams, match="context.selection.text must be a string"):
        await request(editor, "agent/turn", {"sessionId": sid, "prompt": "x",
                                             "context": {"selection": {"path": "a.py", "text": 1}}})
    assert srv.requests == []


async def test_a_mentioned_file_is_read_from_its_unsaved_buffer(editor: Editor, srv: ScriptedServer,
                                                                 workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    uri = editor.open(workspace / "notes.md")
    editor.type_into(uri, [{"range": {"start": {"line": 3, "character": 5}, "end": {"line": 3, "character": 5}},
                            "newText": "\n- three (unsaved)"}])
    sid = await new_session(editor)
    srv.push(text("Three notes."))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": [
        {"type": "text", "text": "count @notes.md"}, {"type": "resource_link", "uri": uri, "name": "notes.md"}]})
    sent = srv.requests[-1].last_user_text or ""
    assert f'<resource uri="{uri}">\n# Notes\n\n- one\n- two\n- three (unsaved)' in sent


async def test_tool_call_ids_stay_unique_when_the_provider_reuses_them(
        editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    for n in range(2):
        srv.push(tools(call("list_dir", {}, id="call_0_0")), text(f"listed {n}"))
        await request(editor, "agent/turn", {"sessionId": sid, "prompt": f"list {n}"})
    ids = [u["update"]["toolCallId"] for u in editor.seen.updates if u["update"]["sessionUpdate"] == "tool_call"]
    assert ids == ["call_0_0", "call_0_0-2"]
