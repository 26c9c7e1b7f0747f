"""Slash commands: /compact (compaction_update only for clients that declared it), /undo, /model, /context, /help."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from acp import text_block
from acp_harness.agent import MODEL, Agent, agent_env, start_agent

from agentls.agent.scripted import ScriptedServer, call, text, tools

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(scripted: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Agent]:
    """A client that did not declare ``session.compaction`` (nor fs or terminal)."""
    home = tmp_path_factory.mktemp("plain")
    async with start_agent(home, agent_env(scripted, home), caps=None) as agent:
        yield agent
    agent.check_frames()


async def _chat(agent: Agent, scripted: ScriptedServer, ws: Path) -> str:
    sid = await agent.new_session(ws)
    for i in range(3):
        scripted.push(text(f"answer {i} " + "words " * 50))
        await agent.conn.prompt(session_id=sid, prompt=[text_block(f"question {i} " + "more " * 50)])
    return sid


async def test_compact_reports_compaction_updates(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await _chat(agent, scripted, ws)
    scripted.push(text("Goal: answer questions. Done: three answers."))
    start = agent.mark()
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block("/compact the answers")])
    assert response.stop_reason == "end_turn"
    updates = [f["params"]["update"] for f in agent.sent(start) if f.get("method") == "session/update"]
    compactions = [u for u in updates if u["sessionUpdate"] == "compaction_update"]
    assert [u["status"] for u in compactions] == ["in_progress", "completed"]
    assert compactions[0]["compactionId"] == compactions[1]["compactionId"]
    assert not any(u["sessionUpdate"] == "agent_message_chunk" for u in updates)
    assert not any("/compact" in str(m.get("content")) for r in scripted.requests for m in r.messages), \
        "the command never reaches the model as a prompt"


async def test_compact_without_the_capability_is_a_message(plain: Agent, scripted: ScriptedServer,
                                                           ws: Path) -> None:
    scripted.clear()
    start = plain.mark()
    sid = await _chat(plain, scripted, ws)
    scripted.push(text("summary"))
    response = await plain.conn.prompt(session_id=sid, prompt=[text_block("/compact")])
    assert response.stop_reason == "end_turn"
    assert "context compacted" in plain.client.text(sid)
    raw = "".join(r["raw"] for r in plain.records(start) if r["dir"] == "out")
    assert "compaction_update" not in raw
    plain.check_frames(start)


async def test_plain_client_gets_disk_and_local_commands(plain: Agent, scripted: ScriptedServer, ws: Path) -> None:
    """Without fs/terminal capabilities the agent uses the disk and runs commands itself."""
    scripted.clear()
    start = plain.mark()
    sid = await plain.new_session(ws)
    await plain.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(call("write_file", {"path": "w.txt", "content": "disk"})),
                  tools(call("terminal", {"command": "cat w.txt"})), text("done"))
    await plain.conn.prompt(session_id=sid, prompt=[text_block("go")])
    assert (ws / "w.txt").read_text() == "disk"
    assert not plain.client.calls, "no fs/* or terminal/* requests to a client that did not declare them"
    assert "disk" in str(scripted.requests[-1].messages[-1]["content"])
    plain.check_frames(start)


async def test_undo_reverts_the_last_turn(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    (ws / "keep.txt").write_text("original\n")
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(call("read_file", {"path": "keep.txt"}), call("write_file", {"path": "keep.txt", "content": "changed\n"}),
                        call("write_file", {"path": "new.txt", "content": "new\n"})), text("edited"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("edit")])
    assert (ws / "keep.txt").read_text() == "changed\n"
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/undo")])
    assert (ws / "keep.txt").read_text() == "original\n" and not (ws / "new.txt").exists()
    assert "keep.txt" in agent.client.text(sid)
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/undo")])
    assert agent.client.text(sid).endswith("Nothing to undo: no file edits were recorded for the last turn.\n")


async def test_model_command(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/model")])
    assert f"Model: `{MODEL}`" in agent.client.text(sid)
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/model bigger-model")])
    update = [u for u in agent.client.updates[sid] if u["sessionUpdate"] == "config_option_update"][-1]
    assert update["configOptions"][0]["currentValue"] == "bigger-model"
    scripted.push(text("big"), model="bigger-model")
    await agent.conn.prompt(session_id=sid, prompt=[text_block("hello")])
    assert scripted.requests[-1].model == "bigger-model"


async def test_context_and_help(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/context")])
    assert "tokens" in agent.client.text(sid)
    assert any(u["sessionUpdate"] == "usage_update" for u in agent.client.updates[sid])
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/help")])
    for name in ("/compact", "/undo", "/model", "/context", "/help"):
        assert name in agent.client.text(sid)
    assert not scripted.requests, "commands do not call the model"


async def test_unknown_slash_text_goes_to_the_model(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(text("that is a path"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/usr/bin/env is what?")])
    assert scripted.requests[-1].last_user_text == "/usr/bin/env is what?"
