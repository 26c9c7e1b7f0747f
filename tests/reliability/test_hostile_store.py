"""Hostile workspace, class 3: the session store.

The database may be found truncated, full of garbage, replaced by a directory, in a place that cannot be
written, or read-only; and two processes may try to drive one session. Every request gets an answer in
words naming the file (never a traceback); a damaged database is moved aside, kept, and a fresh one
opened; a read-only one still lists and loads; a session whose turn runs in another process is leased
there, so a turn here is refused (and taken over at once when that process is gone).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.sessions import SessionStore
from agentls.agent.transcript import violations

from .hostile import acp_server, lsp_server, run_cli, run_env, shown_messages
from .wire import server_env

DAMAGE = ("truncated", "garbage")


async def stored_session(db: Path, cwd: Path) -> str:
    async with SessionStore(db) as store:
        await store.create_session(session_id="s-old", cwd=cwd, model="scripted", system_prompt="p", title="old one")
        await store.append_messages("s-old", [{"role": "user", "content": "an old request " + "x" * 200},
                                              {"role": "assistant", "content": "an old answer"}], turn=1)
        for n in range(200):  # enough pages that a truncation cuts tables
            await store.append_messages("s-old", [{"role": "user", "content": f"filler {n} " + "y" * 400},
                                                  {"role": "assistant", "content": "ok"}], turn=n + 2)
    return "s-old"


def damage(db: Path, how: str) -> None:
    data = db.read_bytes()
    if how == "truncated":
        db.write_bytes(data[: len(data) // 3])
    else:
        db.write_bytes(random.Random(13).randbytes(len(data)))


def moved(db: Path) -> list[Path]:
    return sorted(p for p in db.parent.iterdir() if p.name.startswith(db.name + ".damaged-") and
                  not p.name.endswith(("-wal", "-shm")))


def no_traceback(answer: dict[str, Any]) -> None:
    blob = json.dumps(answer)
    assert "Traceback" not in blob and 'File \\"' not in blob, blob[:2000]


@pytest.mark.parametrize("how", DAMAGE)
@pytest.mark.parametrize("face", ["lsp", "acp", "run"])
async def test_a_damaged_database_is_moved_aside_and_a_fresh_one_opened(face: str, how: str, srv: ScriptedServer,
                                                                        workspace: Path, home: Path) -> None:
    db = home / "data" / "sessions.db"
    await stored_session(db, workspace)
    damage(db, how)
    original = db.read_bytes()
    srv.push(tools(call("read_file", {"path": "notes.md"})), text("done"))
    if face == "lsp":
        async with lsp_server(srv, workspace, home) as lsp:
            listed = await lsp.call("agent/listSessions", {})
            assert listed.get("result") == {"sessions": []}, listed
            sid = await lsp.new_session()
            assert (await lsp.result("agent/turn", {"sessionId": sid, "prompt": "go"}, 60))["completed"]
            said = "\n".join(shown_messages(lsp))
            assert await lsp.shutdown() == 0
    elif face == "acp":
        async with acp_server(srv, workspace, home) as acp:
            assert (await acp.result("session/list", {}))["sessions"] == []
            sid = await acp.new_session(workspace)
            answer = await acp.result("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]},
                                      60)
            assert answer["stopReason"] == "end_turn"
            said = "".join(u["update"]["content"].get("text", "") for u in acp.updates
                           if u["update"].get("sessionUpdate") == "agent_message_chunk")
            acp.close_stdin()
            assert await acp.wait(20) == 0
    else:
        code, _, said = await run_cli(srv, workspace, home, "go")
        assert code == 0, said
    (aside,) = moved(db)
    assert aside.read_bytes() == original, "the damaged file must be kept as it was"
    assert str(db) in said and str(aside) in said and "kept, not deleted" in said, said
    async with SessionStore(db) as store:  # the fresh store holds the new session
        rows, _ = await store.list_sessions()
        assert len(rows) == 1 and not store.notices


@pytest.mark.parametrize("face", ["lsp", "acp", "run"])
async def test_a_directory_in_place_of_the_database_is_named_and_left_alone(face: str, srv: ScriptedServer,
                                                                           workspace: Path, home: Path) -> None:
    db = home / "data" / "sessions.db"
    db.mkdir(parents=True)
    (db / "precious.txt").write_text("the user's\n")
    if face == "lsp":
        async with lsp_server(srv, workspace, home) as lsp:
            for method, params in (("agent/listSessions", {}), ("agent/newSession", {}), ("agent/listSessions", {})):
                answer = await lsp.call(method, params)
                assert answer["error"]["code"] == -32603, answer
                assert str(db) in answer["error"]["message"] and "is a directory" in answer["error"]["message"]
                no_traceback(answer)
            shutil.rmtree(db)  # fixed while the server runs: the next request works, no restart
            assert (await lsp.result("agent/listSessions", {})) == {"sessions": []}
            assert await lsp.shutdown() == 0
    elif face == "acp":
        async with acp_server(srv, workspace, home) as acp:
            for method, params in (("session/list", {}), ("session/new", {"cwd": str(workspace), "mcpServers": []})):
                answer = await acp.call(method, params)
                assert str(db) in answer["error"]["message"] and "is a directory" in answer["error"]["message"], answer
                no_traceback(answer)
            acp.close_stdin()
            assert await acp.wait(20) == 0
    else:
        code, out, err = await run_cli(srv, workspace, home, "go")
        assert code == 2 and str(db) in err and "is a directory" in err and "Traceback" not in err, err
    if face != "lsp":  # the LSP case removed it itself
        assert (db / "precious.txt").read_text() == "the user's\n"


async def test_writes_that_fail_mid_session_do_not_end_the_turn_or_the_server(srv: ScriptedServer, workspace: Path,
                                                                              home: Path) -> None:
    """The database starts refusing writes after the first turn (another connection adds a trigger that aborts
    them, as a full disk would): the next turn is still answered, the server lives on, and once writes work
    again the turn after it saves the whole transcript."""
    srv.push(text("one"), tools(call("read_file", {"path": "notes.md"})), text("two"), text("three"))
    db = home / "data" / "sessions.db"
    async with lsp_server(srv, workspace, home) as lsp:
        sid = await lsp.new_session()
        assert (await lsp.result("agent/turn", {"sessionId": sid, "prompt": "first"}, 30))["completed"]
        with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as raw:
            raw.execute("CREATE TRIGGER fail BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'disk full'); END")
            answer = await lsp.call("agent/turn", {"sessionId": sid, "prompt": "second"}, 30)
            raw.execute("DROP TRIGGER fail")
        assert answer["result"]["completed"] and answer["result"]["finalResponse"] == "two", answer
        assert (await lsp.result("agent/turn", {"sessionId": sid, "prompt": "third"}, 30))["finalResponse"] == "three"
        assert await lsp.shutdown() == 0
    async with SessionStore(db) as store:
        saved = await store.load_messages(sid)
    assert [m["role"] for m in saved] == ["user", "assistant", "user", "assistant", "tool", "assistant", "user",
                                          "assistant"]
    assert violations(saved) == []


@pytest.mark.parametrize("face", ["lsp", "run"])
async def test_an_unwritable_location_is_named(face: str, srv: ScriptedServer, workspace: Path,
                                               home: Path) -> None:
    data = workspace / "README.md" / "data"  # under a regular file: nobody, not even root, can create it
    env = server_env(home, AGENTLS_DATA_DIR=str(data))
    if face == "lsp":
        async with lsp_server(srv, workspace, home, env=env) as lsp:
            answer = await lsp.call("agent/listSessions", {})
            message = answer["error"]["message"]
            no_traceback(answer)
            assert await lsp.shutdown() == 0
    else:
        code, _, message = await run_cli(srv, workspace, home, "go", env=run_env(home, srv, AGENTLS_DATA_DIR=str(data)))
        assert code == 2
    assert str(data) in message and "AGENTLS_DATA_DIR" in message and "Traceback" not in message, message


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[None]:
    """``directory`` read-only for this process: a read-only bind mount as root, else the mode bits."""
    if os.geteuid() == 0:
        if subprocess.run(["mount", "--bind", str(directory), str(directory)], capture_output=True).returncode:
            pytest.skip("read-only as root needs a bind mount, which this machine does not allow")
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(directory)], check=True, capture_output=True)
            yield
        finally:
            subprocess.run(["umount", str(directory)], capture_output=True)
    else:
        files = list(directory.iterdir())
        for f in files:
            f.chmod(0o444)
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
            for f in files:
                f.chmod(0o644)


async def test_a_read_only_database_still_lists_and_loads(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    db = home / "data" / "sessions.db"
    sid = await stored_session(db, workspace)
    with read_only(db.parent):
        async with lsp_server(srv, workspace, home) as lsp:
            listed = await lsp.result("agent/listSessions", {})
            assert [s["sessionId"] for s in listed["sessions"]] == [sid]
            loaded = await lsp.result("agent/loadSession", {"sessionId": sid})
            assert loaded["messages"][0]["content"].startswith("an old request")
            refused = await lsp.call("agent/turn", {"sessionId": sid, "prompt": "more"})
            assert refused["error"]["data"]["reason"] == "sessionStore", refused
            assert "read-only" in refused["error"]["message"] and str(db) in refused["error"]["message"]
            no_traceback(refused)
            said = "\n".join(shown_messages(lsp))
            assert "opened read-only" in said and str(db) in said, said
            assert await lsp.shutdown() == 0
        code, out, err = await run_cli(srv, workspace, home, "more", "--session", sid)
        assert code == 2 and "read-only" in err, err
    assert db.read_bytes()[:16] == b"SQLite format 3\x00"


# ----------------------------------------------------------------------------- two processes, one session
async def _wait_for_tool_call(proc: Any, timeout: float = 30) -> None:
    for _ in range(int(timeout / 0.02)):
        if any(u["update"].get("sessionUpdate") == "tool_call" for u in proc.updates):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the first process never started its tool call")


async def test_a_session_running_in_one_process_is_refused_in_another(srv: ScriptedServer, workspace: Path,
                                                                      home: Path) -> None:
    """A runs a turn (held up in a slow model call); B, another server on the same store, can load the session
    (and is told), but its turn is refused, so is ``agentls run --session``; when A is killed, B takes the
    session over at once, with A's saved rounds in its transcript."""
    srv.push(text("first answer"), tools(call("read_file", {"path": "notes.md"})), text("never", latency=120))
    env = server_env(home)
    async with lsp_server(srv, workspace, home, env=env) as a, lsp_server(srv, workspace, home, env=env) as b:
        sid = await a.new_session()
        assert (await a.result("agent/turn", {"sessionId": sid, "prompt": "one"}, 30))["completed"]
        a.start_request("agent/turn", {"sessionId": sid, "prompt": "two"})
        await _wait_for_tool_call(a)
        loaded = await b.result("agent/loadSession", {"sessionId": sid})
        assert loaded["runningElsewhere"]["pid"] == a.proc.pid, loaded.get("runningElsewhere")
        refused = await b.call("agent/turn", {"sessionId": sid, "prompt": "three"}, 30)
        assert refused["error"]["data"]["reason"] == "sessionBusy", refused
        assert f"agentls process {a.proc.pid}" in refused["error"]["message"]
        no_traceback(refused)
        code, _, err = await run_cli(srv, workspace, home, "four", "--session", sid, env=run_env(home, srv))
        assert code == 1 and "is busy" in err, err
        a.kill9()
        await a.proc.wait()
        srv.clear()
        srv.push(text("B answers"))
        taken = await b.result("agent/turn", {"sessionId": sid, "prompt": "three"}, 30)
        assert taken["completed"] and taken["finalResponse"] == "B answers", taken
        messages = (await b.result("agent/loadSession", {"sessionId": sid}))["messages"]
        assert await b.shutdown() == 0
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert users == ["one", "two", "three"], users
    assert violations(messages) == [], violations(messages)


async def test_acp_load_says_so_and_prompt_is_refused(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    srv.push(tools(call("read_file", {"path": "notes.md"})), text("never", latency=120))
    async with lsp_server(srv, workspace, home) as a, acp_server(srv, workspace, home) as b:
        sid = await a.new_session()
        a.start_request("agent/turn", {"sessionId": sid, "prompt": "long one"})
        await _wait_for_tool_call(a)
        loaded = await b.result("session/load", {"sessionId": sid, "cwd": str(workspace), "mcpServers": []}, 30)
        elsewhere = loaded["_meta"]["agentls"]["runningElsewhere"]
        assert elsewhere["pid"] == a.proc.pid and "refused" in elsewhere["message"], loaded
        refused = await b.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "mine"}]}, 30)
        assert refused["error"]["data"]["reason"] == "sessionBusy", refused
        no_traceback(refused)
        await a.result("agent/interrupt", {"sessionId": sid})
        b.close_stdin()
        assert await b.wait(20) == 0

