"""$/progress around turns: begin, a report per tool call, end; window/workDoneProgress/cancel interrupts."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import initialize, new_session, request, until
from .editor import Editor


async def test_a_turn_reports_progress(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, agent={"updates": True})
    sid = await new_session(editor)
    srv.push(tools(call("terminal", {"command": "echo running tests"})), text("all green"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "run the   tests please"})
    [reports] = list(editor.progress_reports.values())
    begin, *middle, end = reports
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert begin.title == "agentls" and begin.message == "run the tests please" and begin.cancellable
    assert any(isinstance(r, types.WorkDoneProgressReport) and r.message == "echo running tests…" for r in middle)
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message == "done"


async def test_a_client_token_is_used_as_given(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, profile="bare", agent=None)
    sid = await new_session(editor)
    editor.progress_reports["mine"] = []
    srv.push(text("ok"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "hi", "workDoneToken": "mine"})
    kinds = [type(r).__name__ for r in editor.progress_reports["mine"]]
    assert kinds == ["WorkDoneProgressBegin", "WorkDoneProgressEnd"]


async def test_no_progress_without_the_capability(editor: Editor, srv: ScriptedServer, workspace: Path) -> None:
    await initialize(editor, srv, workspace, profile="bare", agent=None)
    sid = await new_session(editor)
    srv.push(text("ok"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "hi"})
    assert editor.progress_reports == {}


async def test_cancelling_the_progress_interrupts_the_turn(editor: Editor, srv: ScriptedServer,
                                                           workspace: Path) -> None:
    await initialize(editor, srv, workspace)
    sid = await new_session(editor)
    srv.push(text("too slow", latency=30))
    turn = asyncio.ensure_future(request(editor, "agent/turn", {"sessionId": sid, "prompt": "think hard"}))
    await until(lambda: len(srv.requests) == 1 and editor.progress_reports, what="the turn to start")
    [token] = editor.progress_reports
    editor.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(turn, 5)
    assert result["interrupted"] and result["exitReason"] == "interrupted"
    end = editor.progress_reports[token][-1]
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message == "interrupted"
