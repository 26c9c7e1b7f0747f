"""docs/loop.md §2.5: the iteration budget (consume/refund, concurrency, per provider call, grace call, sharing)."""

from __future__ import annotations

import asyncio
import threading

from agentls.agent.budget import IterationBudget
from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, text, tools

from .conftest import AgentFactory
from .helpers import check, tool_msgs, turn_requests, user_texts

SUMMARY = "Summary: I listed the files; nothing else is left."


def _always_tools(req: RecordedRequest) -> Reply:
    """Calls a tool whenever tools are offered; answers with a summary when they are not. The arguments change
    at each step: the same call with the same result a third time would stop tool use (the loop guard)."""
    if "tools" not in req.body:
        return text(SUMMARY)
    step = len(req.messages)
    return tools(call("list_dir", {"depth": 1 + step % 6}), call("read_file", {"path": "notes.txt", "limit": step}))


def test_consume_and_refund() -> None:
    b = IterationBudget(3)
    assert [b.consume() for _ in range(4)] == [True, True, True, False]
    assert b.used == 3 and b.remaining == 0
    b.refund()
    assert b.remaining == 1 and b.consume() and not b.consume()
    b.refund(5)
    assert b.used == 0 and b.remaining == 3  # a refund never goes below zero


def test_consume_is_safe_across_threads() -> None:
    b = IterationBudget(3000)
    wins = [0] * 8

    def greedy(i: int) -> None:
        for _ in range(500):
            wins[i] += b.consume()

    def churn() -> None:
        for _ in range(2000):
            if b.consume():
                b.refund()

    threads = [threading.Thread(target=greedy, args=(i,)) for i in range(8)]
    threads += [threading.Thread(target=churn) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(wins) == 3000 and b.used == 3000 and b.remaining == 0
    assert not b.consume()


async def test_consume_is_safe_across_tasks() -> None:
    b = IterationBudget(100)

    async def worker() -> int:
        won = 0
        for _ in range(50):
            won += b.consume()
            await asyncio.sleep(0)
        return won

    assert sum(await asyncio.gather(*(worker() for _ in range(10)))) == 100


async def test_budget_counts_provider_calls_not_tools(make_agent: AgentFactory, srv: ScriptedServer,
                                                      stream: bool) -> None:
    shared = IterationBudget(10)
    srv.push(tools(*(call("read_file", {"path": "notes.txt"}) for _ in range(5))),
             tools(call("list_dir", {}), call("search_files", {"pattern": "def"}), call("list_dir", {"path": "src"})),
             text("done"))
    result = check(await make_agent(stream=stream, iteration_budget=shared).run_conversation("work"))
    assert result.completed and result.api_calls == 3 and len(tool_msgs(result)) == 8
    assert shared.used == 3


async def test_many_tools_fit_a_small_budget(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    srv.push(tools(*(call("list_dir", {}) for _ in range(6))), text("done"))
    result = check(await make_agent(max_iterations=2).run_conversation("work"))
    assert result.completed and result.exit_reason == "text_response"


async def test_grace_call_without_tools_then_budget_exhausted(make_agent: AgentFactory, srv: ScriptedServer,
                                                              wire: str, stream: bool) -> None:
    srv.set_responder(_always_tools)
    result = check(await make_agent(wire, stream, max_iterations=2).run_conversation("loop forever"))
    reqs = turn_requests(srv.requests)
    assert len(reqs) == 3
    assert ["tools" in r.body for r in reqs] == [True, True, False]
    assert all(r.rejected is None for r in srv.requests)
    assert result.exit_reason == "budget_exhausted" and result.completed is False
    assert result.final_response == SUMMARY
    assert result.messages[-1] == {"role": "assistant", "content": SUMMARY} or \
        result.messages[-1]["content"] == SUMMARY
    grace_text = set(user_texts(reqs[2])) - set(user_texts(reqs[1]))
    assert grace_text, "the grace call should ask for a summary"
    persisted = {str(m.get("content")) for m in result.messages}
    assert not any(g in p for g in grace_text for p in persisted), "the grace prompt is scaffolding"


async def test_grace_call_that_still_calls_tools_runs_nothing(make_agent: AgentFactory, srv: ScriptedServer,
                                                              workspace: object) -> None:
    srv.push(tools(call("list_dir", {})), tools(call("terminal", {"command": "touch grace-ran.txt"})))
    result = check(await make_agent(max_iterations=1, approval="yolo").run_conversation("go"))
    assert len(srv.requests) == 2 and "tools" not in srv.requests[1].body
    assert result.exit_reason == "budget_exhausted" and result.completed is False
    assert len(tool_msgs(result)) == 1


async def test_shared_budget_across_two_agents(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    shared = IterationBudget(4)
    srv.push(tools(call("list_dir", {})), tools(call("list_dir", {})), text("parent done"), model="parent")
    srv.set_responder(_always_tools, model="child")
    parent = make_agent(model="parent", iteration_budget=shared)
    child = make_agent(model="child", iteration_budget=shared)
    assert check(await parent.run_conversation("first")).completed
    result = check(await child.run_conversation("second"))
    child_reqs = [r for r in srv.requests if r.model == "child"]
    assert ["tools" in r.body for r in child_reqs] == [True, False]
    assert result.exit_reason == "budget_exhausted" and shared.used == 4


async def test_shared_budget_under_concurrent_agents(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    shared = IterationBudget(6)
    srv.set_responder(_always_tools)
    agents = [make_agent(iteration_budget=shared) for _ in range(2)]
    results = await asyncio.wait_for(asyncio.gather(*(a.run_conversation("go") for a in agents)), 10)
    assert all(check(r).exit_reason == "budget_exhausted" for r in results)
    with_tools = [r for r in srv.requests if "tools" in r.body]
    assert len(with_tools) == 6 and len(srv.requests) == 8


async def test_max_iterations_still_bounds_an_agent_with_a_shared_budget(make_agent: AgentFactory,
                                                                         srv: ScriptedServer) -> None:
    """§2.5: "max_iterations per agent, plus an IterationBudget shared with subagents" — both limits apply."""
    srv.set_responder(_always_tools)
    shared = IterationBudget(20)
    result = check(await asyncio.wait_for(
        make_agent(max_iterations=2, iteration_budget=shared).run_conversation("go"), 20))
    assert ["tools" in r.body for r in srv.requests] == [True, True, False]
    assert result.exit_reason == "budget_exhausted"
