"""Session lifecycle: load (replay before the answer), resume (no replay), list, close, modes, model option."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp_harness.agent import MODEL, Agent, write_config

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.sessions.store import SessionStore

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPLAYED = {"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update"}


async def _session_with_history(agent: Agent, scripted: ScriptedServer, ws: Path) -> str:
    (ws / "notes.txt").write_text("remember me\n")
    sid = await agent.new_session(ws)
    scripted.push(tools(call("read_file", {"path": "notes.txt"})), text("It says remember me.", reasoning="hmm"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("what do the notes say?")])
    await agent.conn.close_session(session_id=sid)
    return sid


async def test_load_replays_history_before_answering(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await _session_with_history(agent, scripted, ws)
    agent.client.updates[sid].clear()
    start = agent.mark()
    response = await agent.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
    assert response is not None and response.modes is not None
    sent = agent.sent(start)
    answer = next(i for i, f in enumerate(sent) if "result" in f)
    before = [f["params"]["update"] for f in sent[:answer] if f.get("method") == "session/update"]
    after = [f for f in sent[answer + 1:] if f.get("method") == "session/update"]
    kinds = [u["sessionUpdate"] for u in before]
    assert REPLAYED <= set(kinds)
    assert kinds.index("user_message_chunk") < kinds.index("tool_call") < kinds.index("agent_message_chunk")
    assert before[0]["content"]["text"] == "what do the notes say?"
    assert any(u["sessionUpdate"] == "agent_message_chunk" and u["content"]["text"] == "It says remember me."
               for u in before)
    assert not after, "everything is sent before the answer"
    assert "available_commands_update" in kinds

    scripted.push(text("still me"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("and now?")])
    roles = [m["role"] for m in scripted.requests[-1].messages]
    assert roles.count("user") == 2 and "tool" in roles  # the loaded history went to the model


async def test_resume_does_not_replay(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await _session_with_history(agent, scripted, ws)
    agent.client.updates[sid].clear()
    response = await agent.conn.resume_session(cwd=str(ws), session_id=sid, mcp_servers=[])
    assert response.config_options and response.config_options[0].current_value == MODEL  # type: ignore[union-attr]
    await agent.client.wait_for(lambda: "available_commands_update" in agent.client.kinds(sid))
    assert not REPLAYED & set(agent.client.kinds(sid))
    scripted.push(text("resumed"))
    result = await agent.conn.prompt(session_id=sid, prompt=[text_block("go on")])
    assert result.stop_reason == "end_turn"
    assert len(scripted.requests[-1].messages) > 3


async def test_load_unknown_session_is_an_error(frames_ok: Agent, ws: Path) -> None:
    with pytest.raises(RequestError) as info:
        await frames_ok.conn.load_session(cwd=str(ws), session_id="no-such-session", mcp_servers=[])
    assert "session/list" in str(info.value)


async def test_list_pages_and_filters_by_cwd(frames_ok: Agent, scripted: ScriptedServer, tmp_path: Path) -> None:
    agent = frames_ok
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    async with SessionStore(agent.home / "data" / "sessions.db") as store:
        for i in range(57):
            await store.create_session(session_id=f"s{i:03d}-{uuid.uuid4().hex[:6]}", cwd=str(here), model=MODEL,
                                       system_prompt="")
    sid = await agent.new_session(there)
    scripted.push(text("hello there"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("a session in there")])

    page = await agent.conn.list_sessions(cwd=str(here))
    assert len(page.sessions) == 50 and page.next_cursor
    rest = await agent.conn.list_sessions(cwd=str(here), cursor=page.next_cursor)
    assert len(rest.sessions) == 7 and rest.next_cursor is None
    ids = [s.session_id for s in page.sessions + rest.sessions]
    assert len(set(ids)) == 57 and all(s.cwd == str(here) for s in page.sessions)
    only = await agent.conn.list_sessions(cwd=str(there.resolve()))
    assert [s.session_id for s in only.sessions] == [sid]
    assert only.sessions[0].title == "a session in there" and only.sessions[0].updated_at
    everything = await agent.conn.list_sessions()
    assert len(everything.sessions) == 50
    with pytest.raises(RequestError):
        await agent.conn.list_sessions(cursor="not-a-cursor")
    with pytest.raises(RequestError):
        await agent.conn.list_sessions(cwd="relative/dir")


async def test_close_and_unknown_sessions(frames_ok: Agent, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    await agent.conn.close_session(session_id=sid)
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block("hello?")])
    assert response.stop_reason == "refusal"
    response = await agent.conn.prompt(session_id="never-existed", prompt=[text_block("hello?")])
    assert response.stop_reason == "refusal"
    await agent.conn.close_session(session_id="never-existed")  # closing is idempotent


async def test_new_session_needs_an_absolute_cwd(frames_ok: Agent) -> None:
    with pytest.raises(RequestError) as info:
        await frames_ok.conn.new_session(cwd="relative/path", mcp_servers=[])
    assert info.value.code == -32602 and "absolute" in str(info.value)


async def test_mcp_servers_are_started_and_their_failure_shown(frames_ok: Agent, ws: Path) -> None:
    from acp.schema import McpServerStdio

    agent = frames_ok
    server = McpServerStdio(name="files", command="/usr/bin/mcp-files", args=[], env=[])
    response = await agent.conn.new_session(cwd=str(ws), mcp_servers=[server])
    sid = response.session_id
    await agent.client.wait_for(lambda: any(
        s.get("state") == "failed" for u in agent.client.updates[sid] if u["sessionUpdate"] == "session_info_update"
        for s in (u.get("_meta") or {}).get("agentls", {}).get("mcpServers", [])), timeout=30)
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/context")])
    shown = agent.client.text(sid)
    assert "`files` (stdio): failed" in shown and "not found" in shown  # the session goes on (tests/mcp_client)


async def test_modes_drive_the_permission_policy(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    user_config = agent.home / "config.toml"  # the agent's user config (AGENTLS_CONFIG)
    user_config.write_text('approval = "auto-edit"\n')
    try:
        response = await agent.conn.new_session(cwd=str(ws), mcp_servers=[])
    finally:
        user_config.unlink()
    sid = response.session_id
    assert response.modes is not None and response.modes.current_mode_id == "auto-edit"
    assert [m.id for m in response.modes.available_modes] == ["ask", "auto-edit", "yolo", "plan"]
    scripted.push(tools(call("write_file", {"path": "a.txt", "content": "a"})), text("ok"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("edit")])
    assert not agent.client.permission_requests  # auto-edit: edits do not ask

    await agent.conn.set_session_mode(session_id=sid, mode_id="ask")
    assert agent.client.updates[sid][-1] == {"sessionUpdate": "current_mode_update", "currentModeId": "ask"}
    agent.client.answers.append("reject_once")
    scripted.push(tools(call("write_file", {"path": "b.txt", "content": "b"})), text("ok"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("edit")])
    assert len(agent.client.permission_requests) == 1 and not (ws / "b.txt").exists()
    with pytest.raises(RequestError) as info:
        await agent.conn.set_session_mode(session_id=sid, mode_id="reckless")
    assert info.value.code == -32602 and "yolo" in str(info.value)


async def test_model_config_option(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    write_config(ws, fallback_models=["other-model"])
    response = await agent.conn.new_session(cwd=str(ws), mcp_servers=[])
    sid = response.session_id
    option = response.config_options[0]  # type: ignore[index]
    assert option.id == "model" and option.category == "model" and option.current_value == MODEL
    assert [o.value for o in option.options] == [MODEL, "other-model"]  # type: ignore[union-attr]
    answer = await agent.conn.set_config_option(config_id="model", session_id=sid, value="other-model")
    assert answer is not None and answer.config_options[0].current_value == "other-model"
    update = agent.client.updates[sid][-1]
    assert update["sessionUpdate"] == "config_option_update"
    assert update["configOptions"][0]["currentValue"] == "other-model"
    scripted.push(text("from the other model"), model="other-model")
    await agent.conn.prompt(session_id=sid, prompt=[text_block("hi")])
    assert scripted.requests[-1].model == "other-model"
    with pytest.raises(RequestError):
        await agent.conn.set_config_option(config_id="model", session_id=sid, value="unlisted")
    with pytest.raises(RequestError):
        await agent.conn.set_config_option(config_id="temperature", session_id=sid, value="hot")


async def test_close_cancels_a_running_turn(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    import asyncio

    from agentls.agent.scripted import stall

    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(stall(30, content="slow"))
    turn = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("go")]))
    await agent.client.wait_for(lambda: len(scripted.requests) == 1)
    await asyncio.wait_for(agent.conn.close_session(session_id=sid), 5)
    assert (await asyncio.wait_for(turn, 5)).stop_reason == "cancelled"


async def test_load_replays_image_prompts(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(text("a tiny picture"))
    image = {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}
    await agent.conn.prompt(session_id=sid, prompt=[text_block("what is this?"), image])  # type: ignore[list-item]
    await agent.conn.close_session(session_id=sid)
    agent.client.updates[sid].clear()
    await agent.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
    user = [u["content"] for u in agent.client.updates[sid] if u["sessionUpdate"] == "user_message_chunk"]
    assert user == [{"type": "text", "text": "what is this?"}, image]


async def test_ignored_workspace_settings_are_shown(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    """A cloned repository's .agentls.toml cannot loosen approval; the user is told at the first prompt."""
    from dataclasses import fields

    from agentls.agent.config import Settings

    if "warnings" not in {f.name for f in fields(Settings)}:
        pytest.skip("this core does not report ignored workspace settings")
    agent = frames_ok
    write_config(ws, approval="yolo")
    response = await agent.conn.new_session(cwd=str(ws), mcp_servers=[])
    assert response.modes is not None and response.modes.current_mode_id == "ask"
    scripted.push(text("hello"))
    await agent.conn.prompt(session_id=response.session_id, prompt=[text_block("hi")])
    shown = agent.client.text(response.session_id)
    assert shown.startswith("> ") and "ignored" in shown and shown.endswith("hello")
