"""Suite 4: a misbehaving editor, through the LSP face: refused or failed edits, permission answers that
come late or never, a disconnect mid-turn, and terminal requests that fail.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.scripted import ScriptedServer, call, stall, text, tools
from agentls.agent.sessions.store import SessionStore
from agentls.agent.transcript import violations

from .wire import LspError, LspProc, marked_pids, server_env

EDITS = {"workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True,
                                                           "resourceOperations": ["create", "delete"]}}}
BASE = {"titles": "prompt", "maxRetries": 0, "clientTimeout": 1, "permissionTimeout": 1}


async def start(srv: ScriptedServer, workspace: Path, home: Path, *, agent: dict[str, Any] | None = None,
                capabilities: dict[str, Any] | None = None, **options: Any) -> tuple[LspProc, str]:
    lsp = await LspProc.start(server_env(home), workspace, stderr=home / "stderr.log")
    await lsp.initialize(workspace, {"model": "scripted", "baseUrl": srv.openai_url, "approval": "yolo", **BASE,
                                     **options}, agent=agent or {"updates": True}, capabilities=capabilities)
    return lsp, await lsp.new_session()


def tool_results(srv: ScriptedServer) -> list[str]:
    return [str(m["content"]) for m in srv.requests[-1].messages if m["role"] == "tool"]


async def turn(lsp: LspProc, session_id: str, prompt: str = "go") -> dict[str, Any]:
    result: dict[str, Any] = await lsp.result("agent/turn", {"sessionId": session_id, "prompt": prompt}, 60)
    assert result["completed"] and not result["failed"], result
    return result


async def stored(home: Path, session_id: str) -> list[dict[str, Any]]:
    async with SessionStore(home / "data" / "sessions.db") as store:
        return [dict(m) for m in await store.load_messages(session_id)]


# ---------------------------------------------------------------------- edits
@pytest.mark.parametrize("how", ["refuses", "errors", "never answers"])
async def test_an_edit_the_editor_does_not_apply_is_reported_to_the_model(
        how: str, srv: ScriptedServer, workspace: Path, home: Path) -> None:
    before = (workspace / "notes.md").read_text()

    async def apply_edit(params: Any) -> Any:
        if how == "errors":
            raise LspError(-32603, "the buffer is read-only")
        if how == "never answers":
            await asyncio.sleep(3600)
        return {"applied": False, "failureReason": "the user said no"}

    lsp, sid = await start(srv, workspace, home, capabilities=EDITS)
    lsp.handlers["workspace/applyEdit"] = apply_edit
    try:
        srv.push(tools(call("read_file", {"path": "notes.md"}),
                       call("write_file", {"path": "notes.md", "content": "overwritten\n" * 3})), text("understood"))
        assert (await turn(lsp, sid))["finalResponse"] == "understood"
        [_, result] = tool_results(srv)
        assert "was not applied" in result, result
        assert {"refuses": "rejected", "errors": "read-only", "never answers": "did not answer"}[how] in result
        assert (workspace / "notes.md").read_text() == before
        assert lsp.updates_of("tool_call_update", sid)[-1]["status"] == "failed"
        assert await lsp.shutdown() == 0
    finally:
        await lsp.aclose()


# ---------------------------------------------------------------------- permissions
@pytest.mark.parametrize("delay", [2.5, None], ids=["late", "never"])
async def test_a_permission_answer_that_comes_late_or_never_denies(delay: float | None, srv: ScriptedServer,
                                                                   workspace: Path, home: Path) -> None:
    asked: list[float] = []

    async def permission(params: Any) -> Any:
        asked.append(time.monotonic())
        await asyncio.sleep(3600 if delay is None else delay)
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    lsp, sid = await start(srv, workspace, home, agent={"updates": True, "permissions": True}, approval="ask")
    lsp.handlers["agent/requestPermission"] = permission
    try:
        srv.push(tools(call("terminal", {"command": "touch ran.txt"})), text("noted"))
        started = time.monotonic()
        await turn(lsp, sid)
        assert asked and time.monotonic() - started < 10
        [result] = tool_results(srv)
        assert "cancelled" in result and "did not run" in result, result
        assert not (workspace / "ran.txt").exists(), "the command ran without an answer"
        shown = [m["params"]["message"] for m in lsp.messages if m.get("method") == "window/showMessage"]
        assert any("nobody answered the permission request" in m for m in shown), shown
        await asyncio.sleep(2.0 if delay else 0)  # the late answer arrives now; it must change nothing
        srv.push(text("still here"))
        assert (await turn(lsp, sid, "again"))["finalResponse"] == "still here"
        assert not (workspace / "ran.txt").exists()
        assert await lsp.shutdown() == 0
    finally:
        await lsp.aclose()


# ---------------------------------------------------------------------- disconnects
def running(mark: str, needle: str) -> bool:
    for pid in marked_pids(mark):
        try:
            if needle in Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " "):
                return True
        except OSError:
            continue
    return False


MOMENTS = ["provider call", "in-server command", "permission prompt", "edit"]


@pytest.mark.parametrize("moment", MOMENTS)
async def test_a_disconnect_mid_turn_persists_it_and_leaves_nothing_running(
        moment: str, srv: ScriptedServer, workspace: Path, home: Path) -> None:
    marker = "sleep 86.421"
    agent = {"updates": True, "permissions": moment == "permission prompt"}
    lsp, sid = await start(srv, workspace, home, agent=agent, capabilities=EDITS if moment == "edit" else None,
                           approval="ask" if moment == "permission prompt" else "yolo", clientTimeout=60,
                           permissionTimeout=60)
    waiting = asyncio.Event()

    async def hang(params: Any) -> Any:
        waiting.set()
        await asyncio.sleep(3600)

    lsp.handlers["workspace/applyEdit"] = hang
    lsp.handlers["agent/requestPermission"] = hang
    first = tools(call("read_file", {"path": "notes.md"}))
    second = {"provider call": stall(60.0), "in-server command": tools(call("terminal", {"command": marker})),
              "permission prompt": tools(call("terminal", {"command": "touch never.txt"})),
              "edit": tools(call("write_file", {"path": "notes.md", "content": "x\n" * 4}))}[moment]
    srv.push(first, second, text("unreachable"))
    try:
        lsp.start_request("agent/turn", {"sessionId": sid, "prompt": "work, then wait"})
        deadline = time.monotonic() + 30
        while not (waiting.is_set() or (moment == "provider call" and len(srv.requests) >= 2)
                   or (moment == "in-server command" and running(lsp.mark, marker))):
            assert time.monotonic() < deadline, f"the turn never reached the {moment}"
            await asyncio.sleep(0.02)
        lsp.close_stdin()  # the editor is gone
        assert await lsp.wait(30) == 0
        assert not marked_pids(lsp.mark), "something the server started is still running"
    finally:
        await lsp.aclose()
    messages = await stored(home, sid)
    assert violations(messages) == [], violations(messages)
    roles = [m["role"] for m in messages]
    assert roles[:3] == ["user", "assistant", "tool"], roles  # the completed round is there
    assert messages[0]["content"] == "work, then wait"
    assert not (workspace / "never.txt").exists()


# ---------------------------------------------------------------------- terminals
TERMINAL_FAULTS = {
    "create fails": ("agent/terminal/create", LspError(-32603, "terminals are disabled")),
    "create unsupported": ("agent/terminal/create", LspError(-32601, "method not found")),
    "create never answers": ("agent/terminal/create", None),
    "waitForExit fails": ("agent/terminal/waitForExit", LspError(-32603, "the terminal crashed")),
}


@pytest.mark.parametrize("fault", TERMINAL_FAULTS)
async def test_failing_terminal_requests_fall_back_or_say_so(fault: str, srv: ScriptedServer, workspace: Path,
                                                             home: Path) -> None:
    method, error = TERMINAL_FAULTS[fault]
    called: list[Any] = []

    async def broken(params: Any) -> Any:
        called.append(params)
        if error is None:
            await asyncio.sleep(3600)
        raise error

    async def create(params: Any) -> Any:
        return {"terminalId": "t1"}

    lsp, sid = await start(srv, workspace, home, agent={"updates": True, "terminal": True})
    for name in ("agent/terminal/create", "agent/terminal/waitForExit", "agent/terminal/output",
                 "agent/terminal/kill", "agent/terminal/release"):
        lsp.handlers[name] = create if name == "agent/terminal/create" else (lambda p: None)
    lsp.handlers[method] = broken
    try:
        srv.push(tools(call("terminal", {"command": "echo from-the-fallback"})), text("done"))
        await turn(lsp, sid)
        [result] = tool_results(srv)
        assert called, f"the server never sent {method}"
        fell_back = "from-the-fallback" in result and "exit code 0" in result
        clear = "terminal failed" in result or "got no answer" in result
        assert fell_back or clear, result
        if fault == "create unsupported":
            assert fell_back, result
        assert await lsp.shutdown() == 0
        assert not marked_pids(lsp.mark)
    finally:
        await lsp.aclose()
