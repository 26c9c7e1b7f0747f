"""A prompt whose tool calls go through the client: fs/*, terminal/* and the streamed updates."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block
from acp_harness.agent import MODEL, Agent

from agentls.agent.scripted import ScriptedServer, call, text, tools

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_tools_go_through_the_editor(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    src = ws / "src.py"
    src.write_text("x = 1\n")
    agent.client.buffers[str(src)] = "x = 1  # unsaved\n"  # the editor's unsaved buffer wins over the disk
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(
        tools(call("read_file", {"path": "src.py"}),
              call("todo", {"items": [{"content": "change x", "status": "in_progress"}]})),
        tools(call("read_file", {"path": "src.py"}),
                   call("edit_file", {"path": "src.py", "old_string": "x = 1", "new_string": "x = 2"})),
        tools(call("terminal", {"command": "echo hello-from-terminal && cat src.py"})),
        text("all done", reasoning="thinking about x"))
    start = agent.mark()
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block("make x two")])
    assert response.stop_reason == "end_turn"

    assert src.read_text() == "x = 2  # unsaved\n"  # edited from the buffer, written through fs/write_text_file
    methods = agent.client.methods()
    for method in ("fs/read_text_file", "fs/write_text_file", "terminal/create", "terminal/wait_for_exit",
                   "terminal/output", "terminal/release"):
        assert method in methods, method
    create = next(p for m, p in agent.client.calls if m == "terminal/create")
    assert create["cwd"] == str(ws.resolve()) and create["limit"] and create["args"][0] == "-c"
    assert all(t.released for t in agent.client.terminals.values())

    ups = agent.client.updates[sid]
    read_call = next(u for u in ups if u["sessionUpdate"] == "tool_call" and u["kind"] == "read")
    assert read_call["rawInput"] == {"path": "src.py"}
    assert read_call["locations"][0]["path"] == str(src.resolve())
    diff = next(c for u in ups if u["sessionUpdate"] == "tool_call_update" for c in u.get("content") or []
                if c["type"] == "diff")
    assert diff["oldText"] == "x = 1  # unsaved\n" and diff["newText"] == "x = 2  # unsaved\n"
    plan = next(u for u in ups if u["sessionUpdate"] == "plan")
    assert plan["entries"][0]["content"] == "change x"
    assert any(u["sessionUpdate"] == "usage_update" and u["size"] > 0 for u in ups)
    assert any(u["sessionUpdate"] == "agent_thought_chunk" for u in ups)
    # The answer, then what the turn really did (agent/footer.py), whatever the model said.
    assert agent.client.text(sid) == "all done\n\n_(agentls: changed: src.py +1 \u22121)_\n"

    # The terminal is embedded in the tool call before the agent waits for it.
    sent = agent.sent(start)
    embed = next(i for i, f in enumerate(sent) if f.get("method") == "session/update" and any(
        c.get("type") == "terminal" for c in f["params"]["update"].get("content") or []))
    wait = next(i for i, f in enumerate(sent) if f.get("method") == "terminal/wait_for_exit")
    assert embed < wait

    # The model saw the buffer and the terminal output.
    tool_texts = "\n".join(str(m.get("content")) for r in scripted.requests for m in r.messages if m["role"] == "tool")
    assert "unsaved" in tool_texts and "hello-from-terminal" in tool_texts
    assert {r.model for r in scripted.requests} == {MODEL}


async def test_new_session_streams_commands_after_the_answer(frames_ok: Agent, ws: Path) -> None:
    agent = frames_ok
    start = agent.mark()
    sid = await agent.new_session(ws)
    await agent.client.wait_for(lambda: "available_commands_update" in agent.client.kinds(sid))
    sent = agent.sent(start)
    answer = next(i for i, f in enumerate(sent) if f.get("result", {}).get("sessionId") == sid)
    commands = next(i for i, f in enumerate(sent) if f.get("method") == "session/update")
    assert answer < commands
    names = [c["name"] for c in agent.client.updates[sid][0]["availableCommands"]]
    assert names == ["compact", "undo", "rewind", "model", "context", "help", "memory"]


async def test_permission_allow_then_reject(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    agent.client.answers.extend(["allow_once", "reject_once"])
    scripted.push(tools(call("write_file", {"path": "a.txt", "content": "A"})),
                  tools(call("write_file", {"path": "b.txt", "content": "B"})), text("ok"))
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block("write two files")])
    assert response.stop_reason == "end_turn"
    assert (ws / "a.txt").read_text() == "A" and not (ws / "b.txt").exists()
    asked = agent.client.permission_requests
    assert len(asked) == 2
    assert [o["kind"] for o in asked[0]["options"]] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert asked[0]["toolCall"]["kind"] == "edit" and asked[0]["toolCall"]["rawInput"] == {"path": "a.txt"}
    statuses = [u.get("status") for u in agent.client.updates[sid] if u["sessionUpdate"] == "tool_call_update"]
    assert "failed" in statuses and "completed" in statuses
    last = scripted.requests[-1].messages[-1]
    assert last["role"] == "tool" and "rejected" in str(last["content"])


async def test_always_answers_are_remembered_per_session(frames_ok: Agent, scripted: ScriptedServer,
                                                         ws: Path) -> None:
    agent = frames_ok
    first = await agent.new_session(ws)
    agent.client.answers.extend(["allow_always", "reject_always"])
    scripted.push(tools(call("write_file", {"path": "a.txt", "content": "1"})),
                  tools(call("write_file", {"path": "a.txt", "content": "2"})), text("ok"),
                  tools(call("terminal", {"command": "echo one"})),
                  tools(call("terminal", {"command": "echo two"})), text("ok"))
    await agent.conn.prompt(session_id=first, prompt=[text_block("edits")])
    await agent.conn.prompt(session_id=first, prompt=[text_block("commands")])
    assert len(agent.client.permission_requests) == 2  # one per kind; the second of each was remembered
    assert (ws / "a.txt").read_text() == "2"
    assert "always reject" in str(scripted.requests[-1].messages[-1]["content"])

    second = await agent.new_session(ws)  # another session asks again
    agent.client.answers.append("reject_once")
    scripted.push(tools(call("read_file", {"path": "a.txt"}), call("write_file", {"path": "a.txt", "content": "3"})),
                  text("ok"))
    await agent.conn.prompt(session_id=second, prompt=[text_block("edit")])
    assert len(agent.client.permission_requests) == 3 and (ws / "a.txt").read_text() == "2"


async def test_images_and_embedded_context_reach_the_model(frames_ok: Agent, scripted: ScriptedServer,
                                                           ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(text("seen"))
    blocks = [text_block("look"),
              {"type": "resource", "resource": {"uri": "file:///x/notes.md", "text": "embedded-note-text"}},
              {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}]
    response = await agent.conn.prompt(session_id=sid, prompt=blocks)  # type: ignore[arg-type]
    assert response.stop_reason == "end_turn"
    user = scripted.requests[-1].messages[-1]
    parts = user["content"]
    assert any(p.get("type") == "image_url" for p in parts)
    assert "embedded-note-text" in str(parts)


async def test_editor_errors_fall_back_to_the_disk(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    """An editor that fails fs/read_text_file or terminal/create does not break the tools."""
    agent = frames_ok
    (ws / "data.txt").write_text("on disk\n")
    agent.client.fail |= {"fs/read_text_file", "terminal/create", "fs/write_text_file"}
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(call("read_file", {"path": "data.txt"})),
                  tools(call("terminal", {"command": "echo ran-in-process"})),
                  tools(call("write_file", {"path": "out.txt", "content": "x"})), text("done"))
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
    assert response.stop_reason == "end_turn"
    results = [str(m["content"]) for m in scripted.requests[-1].messages if m["role"] == "tool"]
    assert "on disk" in results[0]
    assert "ran-in-process" in results[1]
    assert "refused" in results[2] and not (ws / "out.txt").exists()


async def test_a_permission_request_names_the_file_and_the_line(frames_ok: Agent, scripted: ScriptedServer,
                                                                ws: Path) -> None:
    """``toolCall.locations`` carry the absolute path (and the first changed line, 0-based) besides the
    diff: a client that opens what it is shown (CodeCompanion) opens the right file."""
    agent = frames_ok
    (ws / "app.py").write_text("one\ntwo\nthree\n")
    sid = await agent.new_session(ws)
    agent.client.answers.extend(["allow_once", "allow_once", "allow_once"])
    scripted.push(tools(call("read_file", {"path": "app.py"})),
                  tools(call("edit_file", {"path": "app.py", "old_string": "three", "new_string": "THREE"})),
                  tools(call("write_file", {"path": "fresh.txt", "content": "new\n"})),
                  tools(call("terminal", {"command": "echo here"})), text("ok"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("change things")])
    edit, create, command = (asked["toolCall"] for asked in agent.client.permission_requests)
    app = str((ws / "app.py").resolve())
    assert edit["locations"] == [{"path": app, "line": 2}] and edit["content"][0]["path"] == app
    assert create["locations"] == [{"path": str((ws / "fresh.txt").resolve()), "line": 0}]
    assert "locations" not in command


async def test_an_empty_answer_for_a_missing_file_is_a_missing_file(frames_ok: Agent, scripted: ScriptedServer,
                                                                    ws: Path) -> None:
    """Toad answers fs/read_text_file for a missing file with "": the file is created (not "read it first",
    not "Overwrite"), a read says it does not exist, and /undo removes it again, leaving no 0-byte file."""
    agent = frames_ok
    agent.client.empty_for_missing = True
    (ws / "empty.txt").write_text("")  # a real empty file stays an existing one
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(call("read_file", {"path": "ghost.txt"})),
                  tools(call("write_file", {"path": "new.txt", "content": "hello\n"})),
                  tools(call("read_file", {"path": "empty.txt"})), text("done"))
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
    assert response.stop_reason == "end_turn"
    results = [str(m["content"]) for m in scripted.requests[-1].messages if m["role"] == "tool"]
    assert "ghost.txt does not exist" in results[0]
    assert results[1].startswith("Created new.txt") and (ws / "new.txt").read_text() == "hello\n"
    assert "(empty file)" in results[2]
    titles = [u.get("title", "") for u in agent.client.updates[sid] if u["sessionUpdate"] == "tool_call"]
    assert not any(t.startswith("Overwrite") for t in titles)
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/undo")])
    assert not (ws / "new.txt").exists()
