"""@-mentions over ACP: a ``resource_link`` is read through the editor (``fs/read_text_file``, bounded) and
its content reaches the model like an embedded resource; and tool-call ids stay unique per session."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block
from acp.schema import ResourceContentBlock
from acp_harness.agent import Agent

from agentls.agent.scripted import ScriptedServer, call, text, tools

pytestmark = pytest.mark.asyncio(loop_scope="module")


def link(path: Path | str, name: str) -> ResourceContentBlock:
    uri = path.as_uri() if isinstance(path, Path) else path
    return ResourceContentBlock(type="resource_link", uri=uri, name=name)


async def test_a_mentioned_file_reaches_the_model_through_the_editor(frames_ok: Agent, scripted: ScriptedServer,
                                                                     ws: Path) -> None:
    agent = frames_ok
    notes = ws / "notes.md"
    notes.write_text("# Notes\n- on disk\n")
    agent.client.buffers[str(notes.resolve())] = "# Notes\n- unsaved in the editor\n"
    big = ws / "big.log"
    big.write_text("".join(f"line {i}\n" for i in range(20_000)))
    outside = ws.parent / "secret.txt"
    outside.write_text("do not read\n")
    sid = await agent.new_session(ws)
    scripted.push(text("Noted."))
    response = await agent.conn.prompt(session_id=sid, prompt=[
        text_block("summarize @notes.md and @big.log"), link(notes, "notes.md"), link(big, "big.log"),
        link(outside, "secret.txt"), link(ws / "missing.md", "missing.md")])
    assert response.stop_reason == "end_turn"
    sent = scripted.requests[-1].last_user_text or ""
    assert f'<resource uri="{notes.as_uri()}">\n# Notes\n- unsaved in the editor\n' in sent
    assert "line 4999\n[... the file goes on after line 5000" in sent and "line 5000\n" not in sent
    assert 'name="secret.txt">(not read: the file is outside the session\'s workspace)' in sent
    assert "do not read" not in sent
    assert 'name="missing.md">(not read: there is no such file)' in sent
    reads = [p for m, p in agent.client.calls if m == "fs/read_text_file"]
    assert {r["path"] for r in reads} >= {str(notes.resolve()), str(big.resolve())}
    assert all(r["line"] == 1 and r["limit"] <= 5001 for r in reads)  # bounded, asked of the editor


async def test_tool_call_ids_stay_unique_across_turns(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    for n in range(3):
        scripted.push(tools(call("list_dir", {}, id="call_0_0")), text(f"listed {n}"))
        await agent.conn.prompt(session_id=sid, prompt=[text_block(f"list {n}")])
    ids = [u["toolCallId"] for u in agent.client.updates[sid] if u["sessionUpdate"] == "tool_call"]
    assert ids == ["call_0_0", "call_0_0-2", "call_0_0-3"]
