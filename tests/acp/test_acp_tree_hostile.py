"""Hostile cases for the session tree over ACP: a rewind over files the user swapped for a symlink, a binary file
or a directory since, odd ``/rewind`` arguments, ``exit_plan`` called twice or outside plan mode,
``$/cancel_request`` with ids of every type. Every frame is schema-validated (``frames_ok``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp_harness.agent import Agent

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.sessions.store import SessionStore

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _edited_session(agent: Agent, scripted: ScriptedServer, ws: Path) -> str:
    """A yolo session whose one turn changed a.txt ("one" -> "two") and created b.txt."""
    (ws / "a.txt").write_text("one\n")
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(call("read_file", {"path": "a.txt"}), call("write_file", {"path": "a.txt", "content": "two\n"}),
                        call("write_file", {"path": "b.txt", "content": "made\n"})), text("done"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("change a, make b")])
    assert (ws / "a.txt").read_text() == "two\n"
    return sid


async def _still_answers(agent: Agent, scripted: ScriptedServer, sid: str) -> None:
    scripted.push(text("still here"))
    assert (await agent.conn.prompt(session_id=sid, prompt=[text_block("are you there?")])).stop_reason == "end_turn"


async def test_rewind_never_writes_through_a_symlink_swapped_in_since(frames_ok: Agent, scripted: ScriptedServer,
                                                                      ws: Path, tmp_path: Path) -> None:
    agent = frames_ok
    sid = await _edited_session(agent, scripted, ws)
    outside = tmp_path / "outside.txt"
    outside.write_text("two\n")  # the same text the turn left: the content check alone would pass
    (ws / "a.txt").unlink()
    (ws / "a.txt").symlink_to(outside)
    for command in ("/rewind", "/rewind 1 force"):
        await agent.conn.prompt(session_id=sid, prompt=[text_block(command)])
        shown = agent.client.text(sid)
        assert "Rewind refused" in shown and "a.txt" in shown, shown
        assert outside.read_text() == "two\n" and (ws / "a.txt").is_symlink()
        assert (ws / "b.txt").exists()  # nothing was put back
    await _still_answers(agent, scripted, sid)


@pytest.mark.parametrize("swap", ["binary", "directory"])
async def test_rewind_over_a_file_made_binary_or_a_directory_refuses(frames_ok: Agent, scripted: ScriptedServer,
                                                                      ws: Path, swap: str) -> None:
    agent = frames_ok
    sid = await _edited_session(agent, scripted, ws)
    (ws / "a.txt").unlink()
    if swap == "binary":
        (ws / "a.txt").write_bytes(b"\x00\xff\xfe binary")
    else:
        (ws / "a.txt").mkdir()
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/rewind")])
    shown = agent.client.text(sid)
    assert "Rewind refused" in shown and "a.txt" in shown, shown
    assert (ws / "b.txt").exists()
    await _still_answers(agent, scripted, sid)


async def test_rewind_arguments_a_confused_user_types(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await _edited_session(agent, scripted, ws)
    for arg in ("0", "-1", "abc", "1.5", "²", "99999999999999999999999", "1 2"):
        before = len(agent.client.text(sid))
        response = await agent.conn.prompt(session_id=sid, prompt=[text_block(f"/rewind {arg}")])
        assert response.stop_reason == "end_turn", arg
        said = agent.client.text(sid)[before:]
        assert "Rewind refused" in said or "takes a number" in said, (arg, said)
    assert (ws / "a.txt").read_text() == "two\n" and (ws / "b.txt").exists()


async def test_exit_plan_twice_in_one_batch_asks_once(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
    agent.client.answers.extend(["auto-edit", "yolo"])
    scripted.push(tools(call("exit_plan", {"plan": "- one"}), call("exit_plan", {"plan": "- two"})), text("ok"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("plan")])
    assert len(agent.client.permission_requests) == 1
    results = [str(m["content"]) for m in scripted.requests[-1].messages if m["role"] == "tool"]
    assert "not in plan mode" in results[1], results
    kinds = agent.client.kinds(sid)
    assert kinds.count("current_mode_update") == 2  # the client's own switch to plan, then exit_plan's


async def test_exit_plan_outside_plan_mode_does_not_ask(frames_ok: Agent, scripted: ScriptedServer,
                                                        ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="ask")
    scripted.push(tools(call("exit_plan", {"plan": "- step"})), text("ok"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
    assert not agent.client.permission_requests
    result = next(str(m["content"]) for m in scripted.requests[-1].messages if m["role"] == "tool")
    assert "error" in result, result


async def test_cancel_request_with_ids_of_every_type(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    odd: list[Any] = [{"requestId": {"a": 1}}, {"requestId": [1]}, {"requestId": None}, {"requestId": True},
                      {"requestId": 1.5}, {}, {"requestId": "x" * 100_000}]
    for params in odd:
        await agent.conn._conn.send_notification("$/cancel_request", params)
    await _still_answers(agent, scripted, sid)


async def test_a_symlink_in_an_extra_root_does_not_lead_outside(frames_ok: Agent, scripted: ScriptedServer, ws: Path,
                                                                tmp_path: Path) -> None:
    agent = frames_ok
    other = tmp_path / "other-root"
    other.mkdir()
    (tmp_path / "secret.txt").write_text("secret\n")
    (other / "link.txt").symlink_to(tmp_path / "secret.txt")
    (other / "up").symlink_to(tmp_path)
    sid = await agent.new_session(ws, additional_directories=[str(other / ".." / "other-root")])
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(call("read_file", {"path": str(other / "link.txt")}),
                        call("write_file", {"path": str(other / "up" / "planted.txt"), "content": "x\n"}),
                        call("read_file", {"path": str(other / ".." / "secret.txt")})), text("tried"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("escape")])
    results = [str(m["content"]) for m in scripted.requests[-1].messages if m["role"] == "tool"]
    assert all("outside the workspace" in r and "secret\n" not in r for r in results), results
    assert not (tmp_path / "planted.txt").exists()


async def test_delete_then_fork_and_load_answer_unknown(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(text("ok"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("soon gone")])
    forked = await agent.conn.fork_session(session_id=sid, cwd=str(ws), mcp_servers=[])
    await agent.conn._conn.send_request("session/delete", {"sessionId": sid})
    with pytest.raises(RequestError) as info:
        await agent.conn.fork_session(session_id=sid, cwd=str(ws), mcp_servers=[])
    assert info.value.code == -32002
    for bad in ({"sessionId": 5}, {"sessionId": None}, {}):
        with pytest.raises(RequestError) as info:
            await agent.conn._conn.send_request("session/delete", bad)
        assert info.value.code in (-32602, -32002), bad
    scripted.push(text("the fork lives on"))  # the fork outlives its origin
    assert (await agent.conn.prompt(session_id=forked.session_id, prompt=[text_block("still?")])).stop_reason \
        == "end_turn"
    assert "soon gone" in str(scripted.requests[-1].messages)


async def test_extra_roots_are_stored_and_restored_by_a_load_without_them(frames_ok: Agent, scripted: ScriptedServer,
                                                                          ws: Path, tmp_path: Path) -> None:
    from acp_harness.agent import agent_env, start_agent

    agent = frames_ok
    other, third = tmp_path / "other-root", tmp_path / "third-root"
    for d in (other, third):
        d.mkdir()
        (d / "lib.txt").write_text(f"in {d.name}\n")
    sid = await agent.new_session(ws, additional_directories=[str(other)])
    scripted.push(text("ok"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("remember my roots")])
    await agent.conn.close_session(session_id=sid)
    async with start_agent(agent.home / "second", agent_env(scripted, agent.home)) as second:
        await second.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        scripted.push(tools(call("read_file", {"path": str(other / "lib.txt")}),
                            call("read_file", {"path": str(third / "lib.txt")})), text("read"))
        await second.conn.prompt(session_id=sid, prompt=[text_block("read them")])
        results = [str(m["content"]) for m in scripted.requests[-1].messages if m["role"] == "tool"][-2:]
        assert "in other-root" in results[0] and "outside the workspace" in results[1], results
        await second.conn.close_session(session_id=sid)
    async with start_agent(agent.home / "third", agent_env(scripted, agent.home)) as again:  # the client's win
        await again.conn.resume_session(cwd=str(ws), session_id=sid, mcp_servers=[],
                                        additional_directories=[str(third)])
        scripted.push(tools(call("read_file", {"path": str(other / "lib.txt")}),
                            call("read_file", {"path": str(third / "lib.txt")})), text("read"))
        await again.conn.prompt(session_id=sid, prompt=[text_block("read them again")])
        results = [str(m["content"]) for m in scripted.requests[-1].messages if m["role"] == "tool"][-2:]
        assert "outside the workspace" in results[0] and "in third-root" in results[1], results


async def test_rewind_across_undo_in_a_new_process(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    from acp_harness.agent import agent_env, start_agent

    agent = frames_ok
    sid = await _edited_session(agent, scripted, ws)  # turn 1: a.txt one -> two, b.txt made
    scripted.push(tools(call("read_file", {"path": "a.txt"}), call("write_file", {"path": "a.txt", "content": "3\n"})),
                  text("again"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("change a again")])
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/undo")])
    assert (ws / "a.txt").read_text() == "two\n"
    await agent.conn.close_session(session_id=sid)
    async with start_agent(agent.home / "after-undo", agent_env(scripted, agent.home)) as other:
        await other.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        await other.conn.prompt(session_id=sid, prompt=[text_block("/rewind 1")])  # turn 2: undone already
        assert (ws / "a.txt").read_text() == "two\n" and (ws / "b.txt").exists()
        await other.conn.prompt(session_id=sid, prompt=[text_block("/rewind 1")])  # turn 1
        assert "Rewound the last turn" in other.client.text(sid), other.client.text(sid)
        assert (ws / "a.txt").read_text() == "one\n" and not (ws / "b.txt").exists()
        scripted.push(text("fresh"))
        await other.conn.prompt(session_id=sid, prompt=[text_block("from scratch")])
        sent = scripted.requests[-1].messages
        assert [m["role"] for m in sent] == ["system", "user"], [m["role"] for m in sent]
        assert sent[0] == scripted.requests[0].messages[0]  # the system prompt is byte-stable
        other.check_frames()


async def test_a_session_deleted_by_another_process_while_open_here(frames_ok: Agent, scripted: ScriptedServer,
                                                                    ws: Path) -> None:
    from acp_harness.agent import agent_env, start_agent

    agent = frames_ok
    sid = await agent.new_session(ws)
    scripted.push(text("ok"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("open in two places")])
    async with start_agent(agent.home / "deleter", agent_env(scripted, agent.home)) as other:
        await other.conn._conn.send_request("session/delete", {"sessionId": sid})
    try:
        response = await agent.conn.prompt(session_id=sid, prompt=[text_block("still here?")])
    except RequestError as exc:
        assert "was deleted" in str(exc) and exc.data["reason"] == "sessionStore", exc.data
    else:
        raise AssertionError(f"the turn ran on a deleted session ({response.stop_reason}) and was not saved")
    async with SessionStore(agent.home / "data" / "sessions.db") as store:
        assert await store.get_session(sid) is None and await store.load_messages(sid) == []
    await _still_answers(agent, scripted, await agent.new_session(ws))


async def test_rewind_sent_while_a_turn_runs(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    import asyncio

    agent = frames_ok
    sid = await _edited_session(agent, scripted, ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="ask")
    scripted.push(tools(call("terminal", {"command": "echo hi"})), text("ran"))
    agent.client.answers.append("wait")
    running = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("run it")]))
    await agent.client.wait_for(lambda: agent.client.permission_requests)
    rewind = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("/rewind 1")]))
    await asyncio.sleep(0.3)
    agent.client.release_waiting()
    await asyncio.wait_for(running, 20)
    try:
        await asyncio.wait_for(rewind, 20)
    except RequestError as exc:
        assert exc.code != -32603, exc
    sent = str([m for r in scripted.requests for m in r.messages])
    assert "/rewind" not in sent  # a command is never handed to the model as a steer
    await _still_answers(agent, scripted, sid)


async def test_fork_at_a_tool_call_a_fork_of_a_fork_and_a_foreign_message_id(frames_ok: Agent,
                                                                            scripted: ScriptedServer,
                                                                            ws: Path) -> None:
    agent = frames_ok
    (ws / "n.txt").write_text("42\n")
    sid, other = await agent.new_session(ws), await agent.new_session(ws)
    scripted.push(tools(call("read_file", {"path": "n.txt"})), text("it is 42"), text("other answer"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("read n")])
    await agent.conn.prompt(session_id=other, prompt=[text_block("elsewhere")])
    async with SessionStore(agent.home / "data" / "sessions.db") as store:
        calling = next(m for m in await store.load_messages(sid) if m.get("tool_calls"))
        foreign = (await store.load_messages(other))[0]
    fork = await agent.conn.fork_session(session_id=sid, cwd=str(ws), mcp_servers=[],
                                         **{"agentls": {"atMessageId": calling["meta"]["messageId"]}})
    twice = await agent.conn.fork_session(session_id=fork.session_id, cwd=str(ws), mcp_servers=[])
    scripted.push(text("forked twice"))
    await agent.conn.prompt(session_id=twice.session_id, prompt=[text_block("and now?")])
    sent = scripted.requests[-1].messages
    roles = [m["role"] for m in sent]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"], roles  # the call keeps its result
    with pytest.raises(RequestError) as info:
        await agent.conn.fork_session(session_id=sid, cwd=str(ws), mcp_servers=[],
                                      **{"agentls": {"atMessageId": foreign["meta"]["messageId"]}})
    assert info.value.code == -32602
    async with SessionStore(agent.home / "data" / "sessions.db") as store:
        assert await store.fork_origin(twice.session_id) == fork.session_id
