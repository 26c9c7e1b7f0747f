"""$/cancelRequest on a turn (-32800, partial transcript persisted) and a client that goes away."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.sessions.store import SessionStore

from .conftest import DB_PATH, SERVER_COMMAND, SERVER_ENV, initialize, new_session, request, until
from .editor import Editor


async def stored(session_id: str) -> list[dict[str, Any]]:
    async with SessionStore(DB_PATH) as store:
        return [dict(m) for m in await store.load_messages(session_id)]


async def test_cancel_request_persists_the_partial_turn_and_answers_32800(editor: Editor, srv: ScriptedServer,
                                                                          workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(tools(call("read_file", {"path": "app.py"})), text("never sent", latency=30))
    future = editor.protocol.send_request("agent/turn", {"sessionId": sid, "prompt": "read then think"},
                                          msg_id="turn-1")
    await until(lambda: len(srv.requests) == 2, what="the second provider call")
    editor.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="turn-1"))
    with pytest.raises(JsonRpcException) as info:
        await asyncio.wait_for(asyncio.wrap_future(future), 10)
    assert info.value.code == -32800
    messages = await stored(sid)
    roles = [m["role"] for m in messages]
    assert roles[:3] == ["user", "assistant", "tool"], roles
    assert messages[0]["content"] == "read then think" and "hello" in str(messages[2]["content"])
    # The session still works, and another session was never disturbed.
    srv.push(text("back again"))
    assert (await request(editor, "agent/turn", {"sessionId": sid, "prompt": "again"}))["finalResponse"] == \
        "back again"


async def test_cancel_of_a_queued_turn(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(text("first", latency=1.0), text("third"))
    first = asyncio.ensure_future(request(editor, "agent/turn", {"sessionId": sid, "prompt": "one"}))
    await until(lambda: len(srv.requests) == 1, what="the first call")
    queued = editor.protocol.send_request("agent/turn", {"sessionId": sid, "prompt": "two"}, msg_id="queued")
    editor.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="queued"))
    with pytest.raises(JsonRpcException) as info:
        await asyncio.wait_for(asyncio.wrap_future(queued), 10)
    assert info.value.code == -32800
    assert (await first)["finalResponse"] == "first"
    assert (await request(editor, "agent/turn", {"sessionId": sid, "prompt": "three"}))["finalResponse"] == "third"
    users = [m["content"] for m in srv.requests[-1].messages if m["role"] == "user"]
    assert users == ["one", "three"]


# ------------------------------------------------------------------ a client that disappears
def _frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def _read(stream: asyncio.StreamReader) -> dict[str, Any]:
    length = 0
    while (line := await stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    message: dict[str, Any] = json.loads(await stream.readexactly(length))
    return message


async def _answer(proc: asyncio.subprocess.Process, msg_id: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        message = await asyncio.wait_for(_read(proc.stdout), 20)
        if message.get("id") == msg_id and "method" not in message:
            return message


def _processes_with(marker: str) -> list[str]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline:
                out.append(cmdline)
    return out


async def test_client_disconnect_ends_turns_persists_and_exits_cleanly(srv: ScriptedServer, workspace: Path) -> None:
    proc = await asyncio.create_subprocess_exec(*SERVER_COMMAND, stdin=asyncio.subprocess.PIPE,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                env=SERVER_ENV)
    assert proc.stdin is not None
    marker = "sleep 97.531"
    init = {"processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {},
            "initializationOptions": {"model": "scripted", "baseUrl": srv.openai_url, "approval": "yolo",
                                      "titles": "prompt"}}
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "agent/newSession", "params": {}}))
    await _answer(proc, 1)
    sid = (await _answer(proc, 2))["result"]["sessionId"]
    srv.push(tools(call("terminal", {"command": marker})), text("unreachable"))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 3, "method": "agent/turn",
                             "params": {"sessionId": sid, "prompt": "wait a long time"}}))
    await until(lambda: _processes_with(marker), what="the in-server command to start")
    proc.stdin.close()  # the editor is gone
    code = await asyncio.wait_for(proc.wait(), 20)
    assert code == 0
    await until(lambda: not _processes_with(marker), 5, "the command's process group to be gone")
    roles = [m["role"] for m in await stored(sid)]
    assert roles[:3] == ["user", "assistant", "tool"], roles


async def test_shutdown_then_exit(srv: ScriptedServer, workspace: Path) -> None:
    proc = await asyncio.create_subprocess_exec(*SERVER_COMMAND, stdin=asyncio.subprocess.PIPE,
                                                stdout=asyncio.subprocess.PIPE, env=SERVER_ENV)
    assert proc.stdin is not None
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 3, "method": "agent/listSessions", "params": {}}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    out, _ = await asyncio.wait_for(proc.communicate(), 20)
    answers = {}
    reader = asyncio.StreamReader()
    reader.feed_data(out)
    reader.feed_eof()
    for _ in range(3):
        message = await _read(reader)
        answers[message["id"]] = message
    assert "result" in answers[1]
    assert answers[2] == {"jsonrpc": "2.0", "id": 2, "result": None}
    assert answers[3]["error"]["code"] == -32600
    assert proc.returncode == 0


async def test_the_server_exits_when_the_editor_process_is_gone(workspace: Path) -> None:
    parent = await asyncio.create_subprocess_exec("sleep", "1")
    proc = await asyncio.create_subprocess_exec(*SERVER_COMMAND, stdin=asyncio.subprocess.PIPE,
                                                stdout=asyncio.subprocess.PIPE, env=SERVER_ENV)
    assert proc.stdin is not None
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"processId": parent.pid, "rootUri": workspace.as_uri(), "capabilities": {}}}))
    await _answer(proc, 1)
    await parent.wait()
    assert await asyncio.wait_for(proc.wait(), 15) == 0  # stdin is still open: it noticed the editor was gone
