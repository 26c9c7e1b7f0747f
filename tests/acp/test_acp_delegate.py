"""delegate_task over ACP (docs/loop.md §9.9, docs/acp.md "Subagents"): the delegate call is one `think` card, the
children's calls are ordinary tool calls with `_meta.agentls.parentToolCallId`, their edits go through
fs/write_text_file with a permission request, /undo reverts them, and a cancel stops every child."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp_harness.agent import Agent

from agentls.agent.scripted import ScriptedServer, call, text, tools
from tests.delegate_script import Router, first_user_text, is_child

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _parent_of(update: dict[str, Any]) -> str | None:
    parent: str | None = ((update.get("_meta") or {}).get("agentls") or {}).get("parentToolCallId")
    return parent


async def test_three_children_answer_under_one_think_card(frames_ok: Agent, scripted: ScriptedServer,
                                                          ws: Path) -> None:
    agent = frames_ok
    (ws / "a.txt").write_text("alpha\n")
    goals = ["Read a.txt and say its word", "List the workspace", "Search for alpha"]
    scripted.set_responder(Router(
        [tools(call("delegate_task", {"tasks": [{"goal": g} for g in goals]})), text("three answers in")],
        {goals[0]: [tools(call("read_file", {"path": "a.txt"})), text("the word is alpha")],
         goals[1]: [tools(call("list_dir", {})), text("one file")],
         goals[2]: [tools(call("search_files", {"pattern": "alpha"})), text("found in a.txt")]}))
    sid = await agent.new_session(ws)
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block("ask around")])
    assert response.stop_reason == "end_turn"
    ups = agent.client.updates[sid]
    [card] = [u for u in ups if u["sessionUpdate"] == "tool_call" and u["title"].startswith("Delegate")]
    assert card["kind"] == "think"
    card_id = card["toolCallId"]
    nested = [u for u in ups if u["sessionUpdate"] == "tool_call" and _parent_of(u) == card_id]
    assert sorted(u["kind"] for u in nested) == ["read", "read", "search"]
    assert all(u["toolCallId"].startswith(card_id + ".") for u in nested)
    assert all(_parent_of(u) == card_id for u in ups
               if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"].startswith(card_id + "."))
    progress = [u for u in ups if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == card_id
                and u.get("status") == "in_progress" and u.get("content")]
    assert any("step 1" in u["content"][0]["content"]["text"] for u in progress)
    final = [u for u in ups if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == card_id
             and u.get("status") == "completed"]
    assert len(final[0]["rawOutput"]["children"]) == 3
    assert agent.client.text(sid).endswith("three answers in\n") or "three answers in" in agent.client.text(sid)
    # Only the parent's turn state and text reach the editor: no child's answer streams into the chat.
    assert "the word is alpha" not in agent.client.text(sid)
    # The turn's tokens, the children's included, ride on the last usage_update.
    meters = [u for u in ups if u["sessionUpdate"] == "usage_update"]
    turn_calls = [r for r in scripted.requests if r.headers.get("x-agentls-purpose", "turn") == "turn"]
    assert len(turn_calls) == 8
    assert meters[-1]["_meta"]["agentls"]["turnUsage"]["promptTokens"] == sum(len(r.raw) // 4 for r in turn_calls)
    firsts = {first_user_text(r) for r in scripted.requests if is_child(r, goals)}
    assert firsts == set(goals)
    # The child sessions are listed under their parent only.
    listed = await agent.conn.list_sessions(cwd=str(ws))
    [parent] = [s for s in listed.sessions if s.session_id == sid]
    assert len(listed.sessions) == 1
    children = (parent.field_meta or {})["agentls"]["children"]
    assert len(children) == 3 and {c["parentToolCallId"] for c in children} == {card_id}


async def test_a_child_edit_asks_the_editor_and_undo_reverts_it(frames_ok: Agent, scripted: ScriptedServer,
                                                                 ws: Path) -> None:
    agent = frames_ok
    (ws / "keep.txt").write_text("original\n")
    goal = "Change keep.txt"
    scripted.set_responder(Router(
        [tools(call("delegate_task", {"goal": goal, "toolsets": ["edit"]})), text("changed it")],
        {goal: [tools(call("read_file", {"path": "keep.txt"})),
                tools(call("write_file", {"path": "keep.txt", "content": "changed\n"})), text("wrote it")]}))
    sid = await agent.new_session(ws)  # approval "ask": the client is asked, and allows once
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block("edit via a subagent")])
    assert response.stop_reason == "end_turn"
    assert (ws / "keep.txt").read_text() == "changed\n"
    [asked] = agent.client.permission_requests
    card_id = next(u["toolCallId"] for u in agent.client.updates[sid] if u["sessionUpdate"] == "tool_call")
    assert asked["toolCall"]["toolCallId"].startswith(card_id + ".")
    assert any(m == "fs/write_text_file" and p["path"] == str((ws / "keep.txt").resolve())
               for m, p in agent.client.calls)
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/undo")])
    assert (ws / "keep.txt").read_text() == "original\n"


async def test_cancel_during_children_ends_the_turn_and_no_model_call_follows(
        frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    goals = ["Slow child one", "Slow child two"]
    scripted.set_responder(Router(
        [tools(call("delegate_task", {"tasks": [{"goal": g} for g in goals]})), text("never")],
        {g: [text("too late", latency=30)] for g in goals}))
    sid = await agent.new_session(ws)
    turn = asyncio.ensure_future(agent.conn.prompt(session_id=sid, prompt=[text_block("wait")]))
    await agent.client.wait_for(lambda: len([r for r in scripted.requests if is_child(r, goals)]) == 2)
    count = len(scripted.requests)
    started = time.monotonic()
    await agent.conn.cancel(session_id=sid)
    response = await asyncio.wait_for(turn, 5)
    assert response.stop_reason == "cancelled"
    assert time.monotonic() - started < 1.0
    await asyncio.sleep(0.3)
    assert len(scripted.requests) == count
    assert all(r.client_disconnected for r in scripted.requests if is_child(r, goals))
    scripted.clear()
