"""Suite 7: the API key never leaves the environment: not into the database, the log file, the
trajectories, or any frame the server sends, not even when a provider error echoes it back.

The key is a distinctive fake (``sk-agentls-canary-…``) in the env var named by ``apiKeyEnv``; the log
file is at DEBUG, trajectories are on, and the turns include provider errors (so errors get logged).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, error, text, tools

from .wire import LspProc, marked_pids, server_env

KEY_ENV = "AGENTLS_RELIABILITY_KEY"


def places(home: Path, lsp: LspProc) -> dict[str, bytes]:
    """Everything the server wrote: its files under ``home`` (DB, WAL, log, trajectories) and its frames."""
    found = {str(p.relative_to(home)): p.read_bytes() for p in home.rglob("*") if p.is_file()}
    found["frames sent to the editor"] = bytes(lsp.sent)
    return found


async def start(srv: ScriptedServer, workspace: Path, home: Path, key: str) -> LspProc:
    env = server_env(home, **{KEY_ENV: key})
    del env["AGENTLS_API_KEY"]
    lsp = await LspProc.start(env, workspace, "--log-file", str(home / "agentls.log"), "--log-level", "DEBUG",
                              stderr=home / "stderr.log")
    await lsp.initialize(workspace, {"model": "scripted", "baseUrl": srv.openai_url, "apiKeyEnv": KEY_ENV,
                                     "approval": "yolo", "titles": "prompt", "maxRetries": 1,
                                     "trajectoryPath": str(home / "trajectories.jsonl")})
    return lsp


def echoing(status: int) -> Any:
    """A provider error whose message repeats the credentials it was sent (some proxies do)."""
    def reply(req: RecordedRequest) -> Reply:
        auth = req.headers.get("authorization", "")
        return error(status, f"bad credentials. Authorization: {auth}; api_key={auth.split()[-1]}; "
                             f'{{"api_key": "{auth.split()[-1]}"}}')
    return reply


async def test_the_key_appears_nowhere(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    key = f"sk-agentls-canary-{uuid.uuid4().hex}"
    script: list[Any] = [tools(call("read_file", {"path": "notes.md"}), call("terminal", {"command": "echo hi"})),
                         text("first turn done"), echoing(500), text("recovered after an echoed 500"),
                         echoing(401)]
    srv.set_responder(lambda req: (lambda r: r(req) if callable(r) else r)(script.pop(0)))
    lsp = await start(srv, workspace, home, key)
    try:
        sid = await lsp.new_session()
        first = await lsp.result("agent/turn", {"sessionId": sid, "prompt": "look around"}, 60)
        second = await lsp.result("agent/turn", {"sessionId": sid, "prompt": "again"}, 60)
        third = await lsp.result("agent/turn", {"sessionId": sid, "prompt": "and fail"}, 60)
        assert first["completed"] and second["finalResponse"] == "recovered after an echoed 500"
        assert third["failed"] and third["error"]["category"] == "auth"
        assert await lsp.shutdown() == 0
        assert not marked_pids(lsp.mark)
    finally:
        await lsp.aclose()
    assert all(r.headers.get("authorization") == f"Bearer {key}" for r in srv.requests), "the key was not used"
    written = places(home, lsp)
    assert {"agentls.log", "trajectories.jsonl", "data/sessions.db"} <= set(written), sorted(written)
    log = written["agentls.log"].decode(errors="replace")
    assert "bad credentials" in log, "the provider errors were not logged"
    leaks = {where: data.count(key.encode()) for where, data in written.items() if key.encode() in data}
    print(f"\nsecrets: key used in {len(srv.requests)} provider requests; {sum(leaks.values())} occurrences in "
          f"{', '.join(sorted(written))} ({sum(len(d) for d in written.values()):,} bytes) {leaks or ''}")
    assert leaks == {}, f"the API key appears in: {leaks}"


async def test_commands_do_not_inherit_the_key(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    """A command the model runs in-server must not see the key: its output goes to the model, the
    transcript, the database and the editor."""
    key = f"sk-agentls-canary-{uuid.uuid4().hex}"
    srv.push(tools(call("terminal", {"command": f"printenv {KEY_ENV}; env"})), text("done"))
    lsp = await start(srv, workspace, home, key)
    try:
        sid = await lsp.new_session()
        await lsp.result("agent/turn", {"sessionId": sid, "prompt": "show the environment"}, 60)
        assert await lsp.shutdown() == 0
    finally:
        await lsp.aclose()
    written = places(home, lsp)
    written["requests to the model (bodies)"] = b"\n".join(r.raw.split(b"\r\n\r\n", 1)[-1] for r in srv.requests)
    leaks = {where: data.count(key.encode()) for where, data in written.items() if key.encode() in data}
    print(f"\nsecrets (a command prints its environment): {sum(leaks.values())} occurrences of the key {leaks or ''}")
    assert leaks == {}, f"the API key reached: {leaks}"
