"""Sessions as a tree over ACP: fork, /rewind, plan mode, modes after load in a new process, session/delete,
$/cancel_request, config options and audio. Every frame is schema-validated (``frames_ok``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import AudioContentBlock
from acp_harness.agent import Agent, agent_env, start_agent

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.sessions.store import SessionStore

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _users(request: Any) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else str(m["content"]) for m in request.messages
            if m["role"] == "user"]


async def _raw(agent: Agent, method: str, params: dict[str, Any]) -> Any:
    return await agent.conn._conn.send_request(method, params)


async def test_fork_copies_the_history_and_the_two_go_their_own_way(frames_ok: Agent, scripted: ScriptedServer,
                                                                     ws: Path) -> None:
    agent = frames_ok
    caps = agent.sent(0)[0]["result"]["agentCapabilities"]["sessionCapabilities"]
    assert caps["fork"] == {} and caps["delete"] == {}
    sid = await agent.new_session(ws)
    scripted.push(text("first answer"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("the first question")])
    forked = await agent.conn.fork_session(session_id=sid, cwd=str(ws), mcp_servers=[])
    fid = forked.session_id
    assert fid != sid and forked.modes is not None
    scripted.push(text("fork answer"))
    await agent.conn.prompt(session_id=fid, prompt=[text_block("only in the fork")])
    assert "the first question" in " ".join(_users(scripted.requests[-1]))  # the fork carries the history
    scripted.push(text("original answer"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("only in the original")])
    users = " ".join(_users(scripted.requests[-1]))
    assert "the first question" in users and "only in the fork" not in users  # never sees the fork's turns
    async with SessionStore(agent.home / "data" / "sessions.db") as store:
        record = await store.get_session(fid)
        assert record is not None and record.title == "the first question (fork)"
        assert await store.fork_origin(fid) == sid


async def test_fork_at_a_message_and_unknown_ones(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    for n in (1, 2):
        scripted.push(text(f"answer {n}"))
        await agent.conn.prompt(session_id=sid, prompt=[text_block(f"question {n}")])
    shown: dict[str, str] = {}
    for u in agent.client.updates[sid]:
        if u["sessionUpdate"] == "agent_message_chunk" and "messageId" in u:
            shown[u["messageId"]] = shown.get(u["messageId"], "") + u["content"]["text"]
    answer_ids = [mid for mid, said in shown.items() if said == "answer 1"]
    assert answer_ids
    forked = await agent.conn.fork_session(session_id=sid, cwd=str(ws), mcp_servers=[],
                                           **{"agentls": {"atMessageId": answer_ids[0]}})
    scripted.push(text("forked"))
    await agent.conn.prompt(session_id=forked.session_id, prompt=[text_block("question 2 again")])
    users = " ".join(_users(scripted.requests[-1]))
    assert "question 1" in users and "question 2 again" in users and "question 2\n" not in users + "\n"
    with pytest.raises(RequestError) as info:
        await agent.conn.fork_session(session_id=sid, cwd=str(ws), mcp_servers=[],
                                      **{"agentls": {"atMessageId": "msg_nope"}})
    assert info.value.code == -32602 and "msg_nope" in str(info.value)
    with pytest.raises(RequestError) as info:
        await agent.conn.fork_session(session_id="no-such-session", cwd=str(ws), mcp_servers=[])
    assert info.value.code == -32002


async def test_rewind_drops_the_turn_and_puts_its_file_back(frames_ok: Agent, scripted: ScriptedServer,
                                                           ws: Path) -> None:
    agent = frames_ok
    (ws / "keep.txt").write_text("original\n")
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(text("hello"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("say hello")])
    scripted.push(tools(call("read_file", {"path": "keep.txt"}),
                        call("write_file", {"path": "keep.txt", "content": "changed\n"}),
                        call("write_file", {"path": "new.txt", "content": "new\n"})), text("edited"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("edit the files")])
    assert (ws / "keep.txt").read_text() == "changed\n"
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/rewind 1")])
    assert (ws / "keep.txt").read_text() == "original\n" and not (ws / "new.txt").exists()
    shown = agent.client.text(sid)
    assert "keep.txt: restored (+1 −1)" in shown and "new.txt: removed" in shown
    scripted.push(text("next"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("what now?")])
    users = " ".join(_users(scripted.requests[-1]))
    assert "say hello" in users and "edit the files" not in users
    roles = [m["role"] for m in scripted.requests[-1].messages if m["role"] != "system"]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False))  # roles still alternate
    await agent.conn.close_session(session_id=sid)  # a reload shows the rewound transcript
    agent.client.updates[sid].clear()
    await agent.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
    replayed = [u["content"]["text"] for u in agent.client.updates[sid] if u["sessionUpdate"] == "user_message_chunk"]
    assert replayed == ["say hello", "what now?"]


async def test_rewind_refuses_when_the_user_changed_the_file_since(frames_ok: Agent, scripted: ScriptedServer,
                                                                   ws: Path) -> None:
    agent = frames_ok
    (ws / "a.txt").write_text("one\n")
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(call("read_file", {"path": "a.txt"}), call("write_file", {"path": "a.txt", "content": "two\n"})),
                  text("done"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("change a")])
    assert (ws / "a.txt").read_text() == "two\n"
    (ws / "a.txt").write_text("the user's own edit\n")
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/rewind")])
    assert (ws / "a.txt").read_text() == "the user's own edit\n"
    assert "Rewind refused" in agent.client.text(sid) and "a.txt" in agent.client.text(sid)
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/rewind 5")])  # more turns than exist
    assert "only 1 turn(s)" in agent.client.text(sid)
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/rewind 1 force")])
    assert (ws / "a.txt").read_text() == "one\n"


async def test_rewind_stops_at_a_compaction(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    for n in range(6):
        scripted.push(text(f"answer {n} " + "words " * 50))
        await agent.conn.prompt(session_id=sid, prompt=[text_block(f"question {n}")])
    scripted.push(text("## Summary\nthe user asked questions"))
    report = await agent.conn.ext_method("agentls/compress", {"sessionId": sid, "keepLast": 1})
    assert report["messagesAfter"] < report["messagesBefore"]
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/rewind 1")])  # its request holds the summary
    assert "only 0 turn(s) can be rewound" in agent.client.text(sid)
    scripted.push(text("after the summary"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("a new question")])
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/rewind 2")])
    assert "only 1 turn(s) can be rewound" in agent.client.text(sid)
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/rewind 1")])
    assert "Rewound the last turn" in agent.client.text(sid)


async def test_plan_mode_reads_but_refuses_an_edit_without_asking(frames_ok: Agent, scripted: ScriptedServer,
                                                                  ws: Path) -> None:
    agent = frames_ok
    (ws / "src.py").write_text("x = 1\n")
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
    scripted.push(tools(call("read_file", {"path": "src.py"}),
                        call("edit_file", {"path": "src.py", "old_string": "x = 1", "new_string": "x = 2"}),
                        call("terminal", {"command": "touch made.txt"})),
                  text("planned"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("plan a change")])
    assert (ws / "src.py").read_text() == "x = 1\n" and not (ws / "made.txt").exists()
    assert not agent.client.permission_requests  # refused without asking
    results = [m for m in scripted.requests[-1].messages if m["role"] == "tool"]
    assert "x = 1" in str(results[0]["content"])
    assert all("plan mode" in str(r["content"]) for r in results[1:])
    assert "exit_plan" in scripted.requests[-1].tools


async def test_exit_plan_asks_and_switches_the_mode(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
    agent.client.answers.append("auto-edit")
    scripted.push(tools(call("exit_plan", {"plan": "- read the code\n- change x"})),
                  tools(call("write_file", {"path": "out.txt", "content": "done\n"})), text("carried out"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("plan then do")])
    asked = agent.client.permission_requests[0]
    assert [o["optionId"] for o in asked["options"]] == ["ask", "auto-edit", "yolo", "plan"]
    kinds = agent.client.kinds(sid)
    assert "plan" in kinds and "current_mode_update" in kinds
    plan = next(u for u in agent.client.updates[sid] if u["sessionUpdate"] == "plan")
    assert [e["content"] for e in plan["entries"]] == ["read the code", "change x"]
    assert (ws / "out.txt").read_text() == "done\n"  # auto-edit: the edit went through unasked
    assert len(agent.client.permission_requests) == 1


async def test_mode_and_options_survive_load_in_a_new_process(frames_ok: Agent, scripted: ScriptedServer,
                                                              ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(text("ok"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("remember my mode")])
    await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
    await agent.conn.set_config_option(session_id=sid, config_id="thinking_budget", value="16384")
    await agent.conn.close_session(session_id=sid)
    home = agent.home / "second"
    async with start_agent(home, agent_env(scripted, agent.home)) as other:
        loaded = await other.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        assert loaded is not None and loaded.modes is not None and loaded.modes.current_mode_id == "plan"
        options = {o.id: o.current_value for o in loaded.config_options or []}
        assert options["thinking_budget"] == "16384" and options["approval"] == "plan"
        resumed = await other.conn.resume_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        assert resumed.modes is not None and resumed.modes.current_mode_id == "plan"
        other.check_frames()


async def test_session_delete(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(text("ok"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("to be deleted")])
    await _raw(agent, "session/delete", {"sessionId": sid})
    listed = await agent.conn.list_sessions(cwd=str(ws.resolve()))
    assert sid not in [s.session_id for s in listed.sessions]
    with pytest.raises(RequestError) as info:
        await agent.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
    assert info.value.code == -32002
    with pytest.raises(RequestError) as info:
        await _raw(agent, "session/delete", {"sessionId": sid})
    assert info.value.code == -32002


async def test_delete_of_the_running_session_is_refused(frames_ok: Agent, scripted: ScriptedServer,
                                                        ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(tools(call("terminal", {"command": "echo hi"})), text("ran"))
    agent.client.answers.append("wait")
    prompt = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("run it")]))
    await agent.client.wait_for(lambda: agent.client.permission_requests)
    with pytest.raises(RequestError) as info:
        await _raw(agent, "session/delete", {"sessionId": sid})
    assert "cancel" in str(info.value)
    agent.client.release_waiting()
    await prompt


async def test_cancel_request_of_an_in_flight_prompt(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(tools(call("terminal", {"command": "echo hi"})), text("ran"))
    agent.client.answers.append("ignore")  # the client never answers the permission request
    request_id = agent.conn._conn._next_request_id
    prompt = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("run it")]))
    await agent.client.wait_for(lambda: agent.client.permission_requests)
    await agent.conn._conn.send_notification("$/cancel_request", {"requestId": request_id})
    response = await asyncio.wait_for(prompt, 10)
    assert response.stop_reason == "cancelled"
    await agent.conn._conn.send_notification("$/cancel_request", {"requestId": 99999})  # unknown: ignored
    scripted.push(text("still fine"))
    assert (await agent.conn.prompt(session_id=sid, prompt=[text_block("go on")])).stop_reason == "end_turn"


async def test_audio_is_refused_and_config_options(frames_ok: Agent, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    with pytest.raises(RequestError) as info:
        await agent.conn.prompt(session_id=sid, prompt=[AudioContentBlock(type="audio", data="AAAA",
                                                                          mime_type="audio/wav")])
    assert info.value.code == -32602 and "audio" in str(info.value)
    options = await agent.conn.set_config_option(session_id=sid, config_id="approval", value="yolo")
    assert {o.id: o.current_value for o in options.config_options}["approval"] == "yolo"
    assert agent.client.kinds(sid).count("current_mode_update") == 1
    with pytest.raises(RequestError):
        await agent.conn.set_config_option(session_id=sid, config_id="thinking_budget", value="lots")


async def test_additional_directories_are_workspace_roots(frames_ok: Agent, scripted: ScriptedServer, ws: Path,
                                                          tmp_path: Path) -> None:
    agent = frames_ok
    other = tmp_path / "other-root"
    other.mkdir()
    (other / "lib.txt").write_text("from the other root\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    sid = await agent.new_session(ws, additional_directories=[str(other)])
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(call("read_file", {"path": str(other / "lib.txt")}), call("read_file", {"path": str(outside)}),
                        call("write_file", {"path": str(other / "new.txt"), "content": "written\n"})),
                  text("read"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("read both")])
    results = [str(m["content"]) for m in scripted.requests[-1].messages if m["role"] == "tool"]
    assert "from the other root" in results[0]
    assert "outside the workspace" in results[1] and "secret" not in results[1]
    assert (other / "new.txt").read_text() == "written\n"
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for bad in ("/", str(other / "lib.txt"), str(loop), "relative/dir"):
        with pytest.raises(RequestError) as info:
            await agent.new_session(ws, additional_directories=[bad])
        assert info.value.code == -32602 and "additionalDirectories" in str(info.value), bad


async def test_usage_and_cost_with_a_price_from_the_settings(frames_ok: Agent, scripted: ScriptedServer,
                                                             ws: Path) -> None:
    from acp_harness.agent import write_config

    agent = frames_ok
    write_config(ws, prices=["scripted-model=2.0/8.0"])
    sid = await agent.new_session(ws)
    scripted.push(text("priced", usage={"prompt_tokens": 1000, "completion_tokens": 500}))
    start = agent.mark()
    await agent.conn.prompt(session_id=sid, prompt=[text_block("how much?")])
    answer = next(f for f in agent.sent(start) if "result" in f and "stopReason" in f["result"])
    meta = answer["result"]["_meta"]["agentls"]
    assert meta["usage"]["promptTokens"] == 1000 and meta["usage"]["completionTokens"] == 500
    assert meta["cost"] == {"amount": 0.006, "currency": "USD"}
    costs = [u["cost"] for u in agent.client.updates[sid] if u["sessionUpdate"] == "usage_update" and "cost" in u]
    assert costs and costs[-1]["amount"] == 0.006


async def test_cancel_request_of_another_request_answers_request_cancelled(frames_ok: Agent,
                                                                          scripted: ScriptedServer,
                                                                          ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    for n in range(4):
        scripted.push(text(f"answer {n} " + "words " * 50))
        await agent.conn.prompt(session_id=sid, prompt=[text_block(f"question {n}")])
    scripted.push(text("a summary that takes long", latency=30))
    asked = len(scripted.requests)
    request_id = agent.conn._conn._next_request_id
    compress = asyncio.ensure_future(agent.conn.ext_method("agentls/compress", {"sessionId": sid, "keepLast": 1}))
    await agent.client.wait_for(lambda: len(scripted.requests) > asked)  # the summary call is under way
    await agent.conn._conn.send_notification("$/cancel_request", {"requestId": request_id})
    with pytest.raises(RequestError) as info:
        await asyncio.wait_for(compress, 10)
    assert info.value.code == -32800
    scripted.push(text("the session still works"))
    assert (await agent.conn.prompt(session_id=sid, prompt=[text_block("and?")])).stop_reason == "end_turn"
