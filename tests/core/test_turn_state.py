"""Turns announce themselves (``session_info_update._meta.agentls.turn``), and a prompt the client did not
type (a steer that starts a turn, a code action) can be echoed as a ``user_message_chunk``."""

from __future__ import annotations

from agentls.agent.scripted import ScriptedServer, error, text

from .conftest import AgentFactory
from .helpers import Updates


def _states(updates: Updates) -> list[dict[str, object]]:
    return [u["_meta"]["agentls"]["turn"] for u in updates.of("session_info_update") if "_meta" in u]


async def test_a_turn_reports_running_then_idle_with_its_exit_reason(make_agent: AgentFactory, srv: ScriptedServer,
                                                                      updates: Updates) -> None:
    srv.push(text("hi"), error(401, "bad key"))
    agent = make_agent()
    await agent.run_conversation("hello", task_id="t1")
    await agent.run_conversation("again")
    assert _states(updates) == [{"state": "running", "taskId": "t1"}, {"state": "idle", "exitReason": "text_response"},
                                {"state": "running"}, {"state": "idle", "exitReason": "failed"}]
    first_update = updates.items[0]
    assert first_update["sessionUpdate"] == "session_info_update"  # before any model output


async def test_echo_prompt_sends_the_prompt_as_a_user_chunk(make_agent: AgentFactory, srv: ScriptedServer,
                                                            updates: Updates) -> None:
    srv.push(text("one"), text("two"))
    agent = make_agent()
    await agent.run_conversation("typed by the user")
    await agent.run_conversation("started by a steer", echo_prompt=True)
    echoed = [u["content"]["text"] for u in updates.of("user_message_chunk")]
    assert echoed == ["started by a steer"]
