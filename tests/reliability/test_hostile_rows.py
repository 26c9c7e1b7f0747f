"""Damaged rows in a real session store (the file edited with sqlite3, as a crash, a disk or a curious user
leaves it): ``agentls run --session`` and ACP ``session/load`` repair the transcript, say which session
and which message, and go on; never a traceback, never a hang. On ``main`` an invalid ``tool_calls``
column printed a JSONDecodeError traceback and ``agentls run`` never exited."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .wire import AcpProc, server_env

DAMAGE = {  # what is written into the assistant row that holds the tool call
    "tool_calls not JSON": "UPDATE messages SET tool_calls = '[{\"id\": \"c1\", broken' WHERE tool_calls IS NOT NULL",
    "tool_calls an object": "UPDATE messages SET tool_calls = '{\"id\": 1}' WHERE tool_calls IS NOT NULL",
    "tool_calls of numbers": "UPDATE messages SET tool_calls = '[1, 2, 3]' WHERE tool_calls IS NOT NULL",
    "tool_calls a blob": "UPDATE messages SET tool_calls = x'00ff00ff' WHERE tool_calls IS NOT NULL",
    "content JSON broken": "UPDATE messages SET content_kind = 3, content = '[{\"type\": \"text\"' WHERE role = 'user'",
    "meta not JSON": "UPDATE messages SET meta = 'not json at all' WHERE role = 'tool'",
    "meta a list": "UPDATE messages SET meta = '[1]' WHERE role = 'tool'",
    "extra not JSON": "UPDATE messages SET extra = '{' WHERE role = 'assistant'",
    "role NULL-ish": "UPDATE messages SET role = 7 WHERE role = 'tool'",
    "tool_call_id a number": "UPDATE messages SET tool_call_id = 42 WHERE role = 'tool'",
    "content kind unknown": "UPDATE messages SET content_kind = 9 WHERE role = 'assistant'",
    # JSON of the right type but the wrong content: the strict provider refused every later prompt
    "content parts of numbers": "UPDATE messages SET content_kind = 3, content = '[1, 2, {\"type\": \"image\"}]' "
                                "WHERE role = 'user'",
    "text part without text": "UPDATE messages SET content_kind = 3, content = '[{\"type\": \"text\"}]' "
                              "WHERE role = 'user'",
    "extra unknown key": "UPDATE messages SET extra = '{\"bogus_field\": 1}' WHERE role = 'assistant'",
}


# Valid column values that break the transcript's rules (SQLite's TEXT affinity stores 7 and 42 as text):
# repaired as a hand-edited transcript is, without a note on the row.
QUIET = {"tool_calls of numbers", "role NULL-ish", "tool_call_id a number"}


def env(home: Path) -> dict[str, str]:
    return server_env(home)


async def agentls_run(home: Path, workspace: Path, srv: ScriptedServer, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--base-url", srv.openai_url,
        "--model", "scripted", *args, env=env(home), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    except TimeoutError:
        proc.kill()
        raise AssertionError("agentls run hung on a damaged session") from None
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def stored_session(home: Path, workspace: Path, srv: ScriptedServer) -> str:
    srv.push(tools(call("read_file", {"path": "README.md"})), text("first answer"))
    code, _, err = await agentls_run(home, workspace, srv, "read it")
    assert code == 0, err
    with sqlite3.connect(home / "data" / "sessions.db") as db:
        (sid,) = db.execute("SELECT id FROM sessions").fetchone()
    return str(sid)



async def damaged_session(home: Path, workspace: Path, srv: ScriptedServer, sql: str) -> str:
    """A stored session with ``sql`` applied to its rows (which must touch at least one)."""
    sid = await stored_session(home, workspace, srv)
    with sqlite3.connect(home / "data" / "sessions.db") as db:
        assert db.execute(sql).rowcount >= 1
    return sid


@pytest.mark.parametrize("case", list(DAMAGE))
async def test_run_session_repairs_a_damaged_row_and_goes_on(case: str, srv: ScriptedServer, workspace: Path,
                                                             home: Path) -> None:
    sid = await damaged_session(home, workspace, srv, DAMAGE[case])
    srv.push(text("second answer"))
    code, out, err = await agentls_run(home, workspace, srv, "--session", sid, "again")
    assert code == 0, err
    assert out.strip() == "second answer"
    assert "Traceback" not in err and "JSONDecodeError" not in err
    if case not in QUIET:
        assert f"session {sid}: stored message" in err and "is damaged" in err
    roles = [m["role"] for m in srv.requests[-1].messages]
    assert roles[-1] == "user" and "unknown" not in roles  # a valid transcript reached the model
    srv.push(text("third answer"))  # and the session goes on
    code, out, err = await agentls_run(home, workspace, srv, "--session", sid, "once more")
    assert code == 0 and out.strip() == "third answer", err


async def test_acp_session_load_of_a_damaged_row(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    sid = await stored_session(home, workspace, srv)
    with sqlite3.connect(home / "data" / "sessions.db") as db:
        db.execute(DAMAGE["tool_calls not JSON"])
    acp = await AcpProc.start(env(home), workspace, stderr=home / "acp.log")
    try:
        await acp.initialize()
        result = await acp.result("session/load", {"sessionId": sid, "cwd": str(workspace), "mcpServers": []}, 60)
        assert result is not None
        assert f"session {sid}: stored message" in (home / "acp.log").read_text()
    finally:
        await acp.aclose()


FORK_DAMAGE = {
    "extra reasoning an object": "UPDATE messages SET extra = '{\"reasoning\": {\"a\": 1}}' WHERE role = 'assistant'",
    "turn not a number": "UPDATE messages SET turn = 'zz'",
}


@pytest.mark.parametrize("case", list(FORK_DAMAGE))
async def test_fork_of_a_session_with_a_damaged_row(case: str, srv: ScriptedServer, workspace: Path,
                                                    home: Path) -> None:
    sid = await damaged_session(home, workspace, srv, FORK_DAMAGE[case])
    srv.push(text("forked answer"))
    code, out, err = await agentls_run(home, workspace, srv, "--fork", sid, "go on")
    assert code == 0 and out.strip() == "forked answer", err
    assert "Traceback" not in err


async def test_a_damaged_sessions_row_hides_no_session(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    """meta not a JSON object, turn_count not a number: session/list answered every request "bad cursor",
    ``agentls sessions`` printed a traceback, and session/load and session/fork answered -32603."""
    sid = await stored_session(home, workspace, srv)
    other = await stored_session(home, workspace, srv)
    with sqlite3.connect(home / "data" / "sessions.db") as db:
        ids = [str(r[0]) for r in db.execute("SELECT id FROM sessions")]
        assert len(ids) == 2 and sid in ids
        db.execute("UPDATE sessions SET meta = 'not json', turn_count = 'abc' WHERE id = ?", (sid,))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls.server", "sessions", env=env(home), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0 and "Traceback" not in err.decode(), err.decode()
    assert all(i in out.decode() for i in ids)
    acp = await AcpProc.start(env(home), workspace, stderr=home / "acp.log")
    try:
        await acp.initialize()
        listed = await acp.result("session/list", {}, 60)
        assert sorted(s["sessionId"] for s in listed["sessions"]) == sorted(ids), other
        answer = await acp.call("session/list", {"cursor": "garbage"}, 60)
        assert answer["error"]["code"] == -32602 and "cursor" in answer["error"]["message"]
        loaded = await acp.result("session/load", {"sessionId": sid, "cwd": str(workspace), "mcpServers": []}, 60)
        assert loaded is not None
        forked = await acp.result("session/fork", {"sessionId": sid, "cwd": str(workspace), "mcpServers": []}, 60)
        assert forked["sessionId"] not in ids
    finally:
        await acp.aclose()
