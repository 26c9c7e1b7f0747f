"""docs/loop.md §3: malformed ``conversation_history`` is repaired before the first call and never poisons later
turns. The scripted provider validates like the real APIs, so a bad request would be rejected (HTTP 400)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.sessions.store import SessionStore
from agentls.agent.transcript import violations

from .conftest import AgentFactory
from .helpers import check


def _u(content: Any = "question") -> dict[str, Any]:
    return {"role": "user", "content": content}


def _a(content: Any = "answer", *ids: str, args: str = '{"path": "notes.txt"}') -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if ids:
        msg["tool_calls"] = [{"id": i, "type": "function", "function": {"name": "read_file", "arguments": args}}
                             for i in ids]
    return msg


def _t(call_id: str, content: Any = "result") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


MALFORMED: dict[str, list[dict[str, Any]]] = {
    "orphan tool result": [_u(), _t("ghost"), _a()],
    "missing one result": [_u(), _a(None, "c1", "c2"), _t("c1"), _a()],
    "missing results at the end": [_u(), _a(None, "c1", "c2")],
    "missing result before a user": [_u(), _a(None, "c1"), _u("why?"), _a()],
    "two users": [_u("one"), _u("two"), _a()],
    "two assistants": [_u(), _a("one"), _a("two")],
    "starts with assistant": [_a("hello"), _u(), _a()],
    "only an assistant": [_a("dangling")],
    "duplicate tool result": [_u(), _a(None, "c1"), _t("c1"), _t("c1", "again"), _a()],
    "results out of order": [_u(), _a(None, "c1", "c2"), _t("c2"), _t("c1"), _a()],
    "system in the middle": [_u(), _a(), {"role": "system", "content": "be nice"}, _u(), _a()],
    "reused call ids": [_u(), _a(None, "c1"), _t("c1"), _a(), _u(), _a(None, "c1"), _t("c1"), _a()],
    "null user content": [_u(None), _a()],
    "assistant with nothing": [_u(), _a(None), _u("again"), _a()],
    "list contents": [_u([{"type": "text", "text": "parts"}]), _a([{"type": "text", "text": "reply"}])],
    "empty list assistant": [_u(), _a([])],
    "broken call arguments": [_u(), _a(None, "c1", args="{not json"), _t("c1"), _a()],
    "tool message with list content": [_u(), _a(None, "c1"), _t("c1", [{"type": "text", "text": "x"}]), _a()],
    "unknown role and junk": [_u(), {"role": "function", "content": "old"}, "not a dict", _a()],  # type: ignore
    "ends with tool results": [_u(), _a(None, "c1"), _t("c1")],
}


@pytest.mark.parametrize("name", MALFORMED)
async def test_malformed_history_is_repaired_before_the_first_call(
        make_agent: AgentFactory, srv: ScriptedServer, wire: str, name: str) -> None:
    agent = make_agent(wire)
    srv.push(tools(call("list_dir", {})), text("fine"), text("still fine"))
    result = check(await agent.run_conversation("next question", conversation_history=MALFORMED[name]))
    assert [r.rejected for r in srv.requests] == [None, None]
    assert result.completed and result.final_response == "fine"
    assert srv.requests[0].last_user_text is not None and "next question" in srv.requests[0].last_user_text
    later = check(await agent.run_conversation("and another"))
    assert later.completed and srv.requests[-1].rejected is None


async def test_repaired_history_is_persisted_valid(make_agent: AgentFactory, srv: ScriptedServer,
                                                   tmp_path: Path, wire: str) -> None:
    db = tmp_path / "s.db"
    agent = make_agent(wire, session_db=db)
    history = [_u(), _a(None, "c1", "c2"), _t("c2"), _u("x"), _u("y"), _a("one"), _a("two"), _t("orphan")]
    srv.push(text("ok"))
    check(await agent.run_conversation("now", conversation_history=history))
    async with SessionStore(db) as store:
        stored = await store.load_messages(agent.session_id)
    assert violations(stored) == []
    assert stored[-2]["role"] == "user" and stored[-1]["content"] == "ok"


async def test_history_replaces_the_session_transcript_without_poisoning_it(
        make_agent: AgentFactory, srv: ScriptedServer) -> None:
    agent = make_agent()
    srv.push(text("first"), text("second"), text("third"))
    check(await agent.run_conversation("one"))
    check(await agent.run_conversation("two", conversation_history=[_u("a"), _u("b"), _a(None, "z")]))
    result = check(await agent.run_conversation("three"))
    assert all(r.rejected is None for r in srv.requests)
    assert result.messages[-1]["content"] == "third"
