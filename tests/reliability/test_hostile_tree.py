"""Forks of a session another process is running, and ``agentls run --fork`` (docs/sessions.md "Fork, rewind,
delete")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.sessions import SessionStore

from .hostile import lsp_server, run_cli
from .wire import server_env


async def test_run_fork_continues_a_copy_and_leaves_the_original(srv: ScriptedServer, workspace: Path,
                                                                 home: Path) -> None:
    srv.push(text("first answer"))
    code, out, _ = await run_cli(srv, workspace, home, "the first question", "--json")
    assert code == 0, out
    sid = json.loads(out)["session_id"]
    srv.push(text("fork answer"))
    code, out, err = await run_cli(srv, workspace, home, "in the fork", "--fork", sid, "--json")
    assert code == 0 and f"forked session {sid} as" in err, err
    fid = json.loads(out)["session_id"]
    assert fid != sid
    assert "the first question" in json.dumps(srv.requests[-1].messages)
    async with SessionStore(home / "data" / "sessions.db") as store:
        original = [m["content"] for m in await store.load_messages(sid) if m["role"] == "user"]
        forked = [m["content"] for m in await store.load_messages(fid) if m["role"] == "user"]
        assert await store.fork_origin(fid) == sid
    assert original == ["the first question"] and forked == ["the first question", "in the fork"]
    code, _, err = await run_cli(srv, workspace, home, "x", "--fork", "no-such-session")
    assert code == 2 and "no stored session" in err
    code, _, err = await run_cli(srv, workspace, home, "x", "--fork", sid, "--session", sid)
    assert code == 2 and "--fork" in err


async def test_a_fork_of_a_session_running_elsewhere_takes_what_is_saved(srv: ScriptedServer, workspace: Path,
                                                                        home: Path) -> None:
    srv.push(text("first answer"), tools(call("read_file", {"path": "notes.md"})), text("never", latency=120))
    env = server_env(home)
    async with lsp_server(srv, workspace, home, env=env) as a, lsp_server(srv, workspace, home, env=env) as b:
        sid = await a.new_session()
        assert (await a.result("agent/turn", {"sessionId": sid, "prompt": "one"}, 30))["completed"]
        a.start_request("agent/turn", {"sessionId": sid, "prompt": "two"})
        for _ in range(1500):
            if any(u["update"].get("sessionUpdate") == "tool_call" for u in a.updates):
                break
            await asyncio.sleep(0.02)
        forked = await b.result("agent/forkSession", {"sessionId": sid})
        srv.clear()
        srv.push(text("the fork goes on"))
        taken = await b.result("agent/turn", {"sessionId": forked["sessionId"], "prompt": "three"}, 30)
        assert taken["completed"] and taken["finalResponse"] == "the fork goes on", taken
        messages = (await b.result("agent/loadSession", {"sessionId": forked["sessionId"]}))["messages"]
        refused = await b.call("agent/deleteSession", {"sessionId": sid}, 30)  # running in A
        assert refused["error"]["data"]["reason"] == "sessionBusy", refused
        a.kill9()
        await a.proc.wait()
        assert await b.shutdown() == 0
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert users[0] == "one" and users[-1] == "three", users
