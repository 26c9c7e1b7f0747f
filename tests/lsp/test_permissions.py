"""Permission prompts: agent/requestPermission when declared, else window/showMessageRequest, else the policy."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import initialize, new_session, request
from .editor import Editor

ASK = {"approval": "ask"}


def last_tool_result(srv: ScriptedServer) -> str:
    return str([m for m in srv.requests[-1].messages if m["role"] == "tool"][-1]["content"])


async def run_command_turn(editor: Editor, srv: ScriptedServer, command: str = "echo allowed") -> dict[str, object]:
    sid = await new_session(editor)
    srv.push(tools(call("terminal", {"command": command})), text("finished"))
    result: dict[str, object] = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "run it"})
    return result


async def test_request_permission_when_declared(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, agent={"permissions": True, "updates": True}, options=ASK)
    await run_command_turn(editor, srv)
    [asked] = editor.seen.permissions
    assert asked["toolCall"]["title"] == "echo allowed" and asked["toolCall"]["kind"] == "execute"
    assert asked["toolCall"]["rawInput"]["command"] == "echo allowed" and asked["toolCall"]["toolCallId"]
    assert {o["optionId"] for o in asked["options"]} == {"allow_once", "allow_always", "reject_once", "reject_always"}
    assert all({"optionId", "name", "kind"} <= set(o) for o in asked["options"])
    assert "allowed" in last_tool_result(srv) and "exit code 0" in last_tool_result(srv)
    assert editor.seen.message_requests == []


async def test_rejected_and_cancelled_answers(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, agent={"permissions": True}, options=ASK)
    editor.permission_answer = "reject_once"
    await run_command_turn(editor, srv)
    assert "the user rejected this command" in last_tool_result(srv)
    editor.permission_answer = "cancelled"
    await run_command_turn(editor, srv)
    assert "cancelled" in last_tool_result(srv)


async def test_show_message_request_when_permissions_are_not_declared(editor: Editor, srv: ScriptedServer,
                                                                      workspace: Path) -> None:
    await initialize(editor, srv, workspace, profile="neovim", agent=None, options=ASK)
    await run_command_turn(editor, srv)
    [asked] = editor.seen.message_requests
    assert "echo allowed" in asked.message
    assert [a.title for a in asked.actions or []] == ["Allow once", "Always allow", "Reject", "Always reject"]
    assert "exit code 0" in last_tool_result(srv)
    editor.message_answer = None  # dismissed
    await run_command_turn(editor, srv, "echo dismissed")
    assert "cancelled" in last_tool_result(srv) and "exit code" not in last_tool_result(srv)


async def test_a_client_that_cannot_ask_gets_the_policy(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, profile="bare", agent=None, options={"approval": "auto-edit"})
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"}),
                   call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "hey"})),
             tools(call("terminal", {"command": "echo should-not-run"})), text("done"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "go"})
    results = [str(m["content"]) for m in srv.requests[-1].messages if m["role"] == "tool"]
    assert "Edited app.py" in results[1]  # auto-edit: edits need no approval
    assert "needs the user's approval" in results[2] and "cannot ask" in results[2]
    assert editor.seen.permissions == [] and editor.seen.message_requests == []


async def test_an_unanswered_prompt_times_out_as_cancelled(editor: Editor, srv: ScriptedServer,
                                                           workspace: Path) -> None:
    await initialize(editor, srv, workspace, agent={"permissions": True},
                     options={**ASK, "permissionTimeout": 1})
    editor.permission_answer = None  # the user walked away
    await run_command_turn(editor, srv)
    assert "cancelled" in last_tool_result(srv)
    warnings = [m.message for m in editor.messages if m.type == types.MessageType.Warning]
    assert any("nobody answered the permission request" in w and "1 s" in w for w in warnings), warnings


async def test_a_permission_request_names_the_file_and_the_line(editor: Editor, srv: ScriptedServer,
                                                                workspace: Path) -> None:
    """``toolCall.locations``: the file an edit touches and the first line it changes (0-based), so an
    editor opens the right place; a command touches no file."""
    await initialize(editor, srv, workspace, agent={"permissions": True, "updates": True}, options=ASK)
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"})),
             tools(call("edit_file", {"path": "app.py", "old_string": "'hello '", "new_string": "'hi '"}),
                   call("write_file", {"path": "fresh.txt", "content": "new\n"}),
                   call("terminal", {"command": "echo here"})), text("done"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "go"})
    edit, create, command = (asked["toolCall"] for asked in editor.seen.permissions)
    assert edit["locations"] == [{"path": str(workspace / "app.py"), "line": 1}]
    assert edit["content"][0]["path"] == str(workspace / "app.py")
    assert create["locations"] == [{"path": str(workspace / "fresh.txt"), "line": 0}]
    assert "locations" not in command
    assert {edit["status"], create["status"], command["status"]} == {"pending"}
