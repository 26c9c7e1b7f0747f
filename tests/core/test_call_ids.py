"""Tool-call ids are unique within a session on every face, whatever ids the provider hands out; the
provider gets its own ids back (agent/call_ids.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.agent.call_ids import CallIds
from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.types import Message

from .conftest import AgentFactory
from .helpers import Updates, check, turn_requests


def _wire_call_ids(body: dict[str, Any], wire: str) -> list[str]:
    """Every tool-call id and every answered id one request carries, in order, as the provider sees them."""
    out: list[str] = []
    for m in body.get("messages", []):
        if wire == "openai":
            out += [c["id"] for c in m.get("tool_calls") or []]
            if m.get("role") == "tool":
                out.append("result:" + m["tool_call_id"])
        elif isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_use":
                    out.append(b["id"])
                elif b.get("type") == "tool_result":
                    out.append("result:" + b["tool_use_id"])
    return out


async def test_a_provider_that_reuses_ids_never_makes_two_calls_share_one(
        srv: ScriptedServer, make_agent: AgentFactory, updates: Updates, wire: str, stream: bool) -> None:
    reused = "call_0_0" if wire == "openai" else "toolu_0"
    agent = make_agent(wire, stream=stream)
    for n in range(3):
        srv.push(tools(call("read_file", {"path": "README.md"}, id=reused)),
                 tools(call("list_dir", {}, id=reused)), text(f"done {n}"))
        check(await agent.run_conversation(f"turn {n}"))
    card_ids = [u["toolCallId"] for u in updates.of("tool_call")]
    assert len(card_ids) == 6 and len(set(card_ids)) == 6, card_ids
    assert card_ids[0] == reused  # the first use keeps the provider's id
    # Every final update names a card that was announced, so no card is overwritten by another call's.
    finals = [u["toolCallId"] for u in updates.of("tool_call_update") if u.get("status") == "completed"]
    assert finals == card_ids
    stored = [c["id"] for m in agent.messages for c in m.get("tool_calls") or []]
    assert stored == card_ids
    answered = [m["tool_call_id"] for m in agent.messages if m.get("role") == "tool"]
    assert answered == card_ids
    # The provider saw only its own id, in every call and every result, and the strict server took it all.
    last = turn_requests(srv.requests)[-1]
    assert last.rejected is None
    assert set(_wire_call_ids(last.body, wire)) == {reused, f"result:{reused}"}
    assert len(_wire_call_ids(last.body, wire)) == 2 * 6


async def test_ids_stay_unique_when_a_stored_session_is_resumed(
        srv: ScriptedServer, make_agent: AgentFactory, updates: Updates, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    first = make_agent(session_db=db)
    srv.push(tools(call("list_dir", {}, id="call_0_0")), text("one"),
             tools(call("list_dir", {}, id="call_0_0")), text("two"))
    check(await first.run_conversation("first"))
    check(await first.run_conversation("second"))
    await first.close()
    resumed = make_agent(session_db=db, session_id=first.session_id)
    srv.push(tools(call("read_file", {"path": "README.md"}, id="call_0_0")), text("three"))
    check(await resumed.run_conversation("third"))
    ids = [c["id"] for m in resumed.messages for c in m.get("tool_calls") or []]
    assert ids == ["call_0_0", "call_0_0-2", "call_0_0-3"]
    last = turn_requests(srv.requests)[-1]
    assert last.rejected is None
    assert set(_wire_call_ids(last.body, "openai")) == {"call_0_0", "result:call_0_0"}


async def test_one_response_that_gives_two_calls_the_same_id(
        srv: ScriptedServer, make_agent: AgentFactory, updates: Updates, wire: str) -> None:
    """Their results could not be told apart under the provider's id, so the second keeps its new id
    everywhere, the provider included (the strict server refuses duplicate ids in one message)."""
    reused = "call_0_0" if wire == "openai" else "toolu_0"
    agent = make_agent(wire)
    srv.push(tools(call("read_file", {"path": "README.md"}, id=reused),
                   call("read_file", {"path": "notes.txt"}, id=reused)), text("both read"))
    check(await agent.run_conversation("read two"))
    card_ids = [u["toolCallId"] for u in updates.of("tool_call")]
    assert card_ids == [reused, f"{reused}-2"]
    last = turn_requests(srv.requests)[-1]
    assert last.rejected is None
    assert _wire_call_ids(last.body, wire) == [reused, f"{reused}-2", f"result:{reused}", f"result:{reused}-2"]


def test_the_provider_view_is_the_same_list_until_an_id_is_renamed() -> None:
    ids = CallIds()
    history: list[Message] = [{"role": "user", "content": "hi"}]
    first: Message = {"role": "assistant", "content": None,
                      "tool_calls": [{"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}}]}
    assert ids.assign(first, history) is first
    history += [first, {"role": "tool", "tool_call_id": "a", "content": "r"}]
    assert ids.for_provider(history) is history
    again = ids.assign(dict(first), history)  # type: ignore[arg-type]
    assert again["tool_calls"][0]["id"] == "a-2" and again["meta"] == {"provider_ids": {"a-2": "a"}}
    history += [again, {"role": "tool", "tool_call_id": "a-2", "content": "r2"}]
    view = ids.for_provider(history)
    assert view is not history and history[3]["tool_calls"][0]["id"] == "a-2"  # the stored one is untouched
    assert [m.get("tool_call_id") for m in view if m.get("role") == "tool"] == ["a", "a"]
    # The copies are made once and reused, so the encoders' caches keep hitting.
    assert all(a is b for a, b in zip(ids.for_provider(history), view, strict=True))


def test_a_call_without_an_id_gets_one_for_everyone() -> None:
    ids = CallIds()
    msg: Message = {"role": "assistant", "content": None,
                    "tool_calls": [{"id": "", "type": "function", "function": {"name": "x", "arguments": "{}"}}]}
    out = ids.assign(msg, [])
    assert out["tool_calls"][0]["id"] == "call-2" and "meta" not in out
