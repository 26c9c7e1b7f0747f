"""delegate_task (docs/loop.md §9.9): children are real agents on the scripted provider, side by side, sharing
the parent turn's budget, with their own linked sessions in a real SQLite file."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from agentls.agent.delegate.child import CHILD_PROMPT
from agentls.agent.delegate.tasks import MAX_BRIEF_CHARS, MAX_TASKS
from agentls.agent.result import ExitReason
from agentls.agent.scripted import ScriptedServer, call, error, text, tools

from tests.delegate_script import Router, first_user_text, is_child
from .conftest import AgentFactory
from .helpers import AnsweringHost, Updates, check, tool_msgs, turn_requests, wait_until

GOAL = "Find where greet is defined"


def delegate(**args: Any) -> Any:
    return tools(call("delegate_task", args))


async def test_one_child_answers_from_its_own_conversation(srv: ScriptedServer, make_agent: AgentFactory,
                                                           tmp_path: Path, updates: Updates) -> None:
    router = Router([delegate(goal=GOAL, context="The user asked about greet."), text("greet is in src/app.py")],
                    {GOAL: [tools(call("search_files", {"pattern": "def greet"})), text("src/app.py line 4")]})
    srv.set_responder(router)
    agent = make_agent(session_db=tmp_path / "s.db")
    result = check(await agent.run_conversation("where is greet?"))
    assert result.completed and result.final_response == "greet is in src/app.py"
    [out] = tool_msgs(result)
    assert "src/app.py line 4" in out["content"] and "What it did" in out["content"]
    assert not out.get("meta", {}).get("error")
    child_reqs = router.child_requests(srv.requests, GOAL)
    assert len(child_reqs) == 2
    first = child_reqs[0]
    # Its first user message is the goal and the context, and nothing of the parent's conversation.
    assert first_user_text(first).startswith(GOAL) and "The user asked about greet." in first_user_text(first)
    assert "where is greet?" not in json.dumps(first.body)
    assert CHILD_PROMPT in (first.system or "")
    assert "delegate_task" not in first.tools and "write_file" not in first.tools and "read_file" in first.tools
    assert "delegate_task" in turn_requests(srv.requests)[0].tools
    assert first.system == child_reqs[1].system  # its own byte-stable system prompt
    # The editor saw the delegate card (kind think) and the child's call under it.
    delegate_id = result.messages[2]["tool_calls"][0]["id"]
    [card] = [u for u in updates.of("tool_call") if u["toolCallId"] == delegate_id]
    assert card["kind"] == "think"
    nested = [u for u in updates.of("tool_call") if u.get("_meta", {}).get("agentls", {}).get("parentToolCallId")]
    assert [u["_meta"]["agentls"]["parentToolCallId"] for u in nested] == [delegate_id]
    assert nested[0]["toolCallId"].startswith(f"{delegate_id}.1.")
    assert len([u for u in updates.of("session_info_update") if "turn" in u.get("_meta", {}).get("agentls", {})]) == 2
    # The child's session is stored, linked to the parent and its call, and not listed at the top level.
    store = agent.store
    assert store is not None
    [child] = await store.child_sessions(agent.session_id)
    assert child.parent_id == agent.session_id and child.parent_tool_call_id == delegate_id
    listed, _ = await store.list_sessions()
    assert [r.id for r in listed] == [agent.session_id]
    assert child.id in [r.id for r in (await store.list_sessions(children=True))[0]]
    stored = await store.load_messages(child.id)
    assert stored[0]["role"] == "user" and str(stored[0]["content"]).startswith(GOAL)
    assert stored[-1]["content"] == "src/app.py line 4"
    # Resumable for inspection: an agent on the child's id loads its transcript and system prompt.
    inspector = make_agent(session_db=store, session_id=child.id)
    async with inspector:
        assert inspector.messages == stored and CHILD_PROMPT in (inspector.system_prompt or "")


async def test_a_steer_during_a_child_goes_to_the_parent(srv: ScriptedServer, make_agent: AgentFactory) -> None:
    router = Router([delegate(goal=GOAL), text("parent answer")],
                    {GOAL: [tools(call("list_dir", {}), latency=0.3), text("child answer")]})
    srv.set_responder(router)
    agent = make_agent()
    task = asyncio.ensure_future(agent.run_conversation("go"))
    await wait_until(lambda: bool(router.child_requests(srv.requests, GOAL)))
    assert agent.steer("also check the tests")
    result = check(await task)
    assert result.completed
    child = router.child_requests(srv.requests, GOAL)
    assert all("also check the tests" not in json.dumps(r.body) for r in child)
    parent_last = [r for r in turn_requests(srv.requests) if not is_child(r, [GOAL])][-1]
    assert "also check the tests" in json.dumps(parent_last.body)


async def test_three_children_run_side_by_side_and_their_usage_counts(srv: ScriptedServer,
                                                                        make_agent: AgentFactory) -> None:
    goals = [f"Question {i}: what does file {i} say" for i in range(3)]
    used = {"prompt_tokens": 100, "completion_tokens": 10}
    router = Router([delegate(tasks=[{"goal": g} for g in goals]), text("all answered", usage=used)],
                    {g: [tools(call("read_file", {"path": "README.md"}), latency=0.3, usage=used),
                         text(f"answer {i}", usage=used)] for i, g in enumerate(goals)})
    router.parent[0].usage = used
    srv.set_responder(router)
    result = check(await make_agent().run_conversation("ask three things"))
    assert result.completed
    [out] = tool_msgs(result)
    assert all(f"answer {i}" in out["content"] for i in range(3)), out["content"]
    per_child = [router.child_requests(srv.requests, g) for g in goals]
    assert all(len(reqs) == 2 for reqs in per_child)
    # Side by side: every child made its first call before any child made its second.
    assert max(reqs[0].received_at for reqs in per_child) < min(reqs[1].received_at for reqs in per_child)
    # 2 parent calls + 6 child calls, 100/10 tokens each.
    assert result.usage["prompt_tokens"] == 800 and result.usage["completion_tokens"] == 80


async def test_the_concurrency_setting_queues_the_rest(srv: ScriptedServer, make_agent: AgentFactory) -> None:
    goals = [f"Task {i}" for i in range(3)]
    router = Router([delegate(tasks=[{"goal": g} for g in goals]), text("ok")],
                    {g: [text(f"done {g}", latency=0.05)] for g in goals})
    srv.set_responder(router)
    result = check(await make_agent(delegate_concurrency=1).run_conversation("go"))
    assert result.completed
    child = [r for r in srv.requests if is_child(r, goals)]
    assert [is_child(r, goals) for r in child] == goals  # one at a time, in order


async def test_a_greedy_child_spends_the_parent_budget_and_the_turn_ends_cleanly(
        srv: ScriptedServer, make_agent: AgentFactory) -> None:
    router = Router([delegate(goal=GOAL), text("never reached")],
                    {GOAL: [tools(call("read_file", {"path": "notes.txt", "offset": n})) for n in range(1, 50)]},
                    grace=text("the subagent used the budget; here is what it found"))
    srv.set_responder(router)
    result = check(await make_agent(max_iterations=5).run_conversation("explore"))
    assert result.exit_reason is ExitReason.BUDGET_EXHAUSTED
    assert result.final_response == "the subagent used the budget; here is what it found"
    turns = [r for r in srv.requests if r.headers.get("x-agentls-purpose", "turn") == "turn"]
    assert len(turns) == 5  # 1 parent call + 4 child calls: the shared budget
    graces = [r for r in srv.requests if r.headers.get("x-agentls-purpose") == "grace"]
    assert len(graces) == 1 and "delegate_task" in json.dumps(graces[0].body)  # the parent's, not the child's
    [out] = tool_msgs(result)
    assert out["content"].startswith("error: subagent 1 of 1 did not finish (stopped: the turn's step budget")


async def test_cancel_during_a_child_stops_it_and_nothing_calls_the_model_after(
        srv: ScriptedServer, make_agent: AgentFactory, tmp_path: Path, updates: Updates) -> None:
    router = Router([delegate(tasks=[{"goal": "slow one", "toolsets": ["terminal"]}, {"goal": "slow two"}]),
                     text("x")],
                    {"slow one": [tools(call("terminal", {"command": f"sleep 30; touch {tmp_path}/ran"})),
                                  text("late")],
                     "slow two": [text("late", latency=30)]})
    srv.set_responder(router)
    agent = make_agent(approval="yolo")
    task = asyncio.ensure_future(agent.run_conversation("go"))
    await wait_until(lambda: len([r for r in srv.requests if is_child(r, ["slow one", "slow two"])]) >= 2)
    await wait_until(lambda: any(u.get("kind") == "execute" for u in updates.of("tool_call")))
    await asyncio.sleep(0.3)  # the command is running
    count = len(srv.requests)
    started = time.monotonic()
    assert agent.interrupt()
    result = await asyncio.wait_for(task, 1.0)
    took = time.monotonic() - started
    assert result.exit_reason is ExitReason.INTERRUPTED, result.exit_reason
    assert took < 1.0
    await asyncio.sleep(0.3)
    assert len(srv.requests) == count  # nothing called the model afterwards
    assert not (tmp_path / "ran").exists()
    assert [t for t in asyncio.all_tasks() if "run_conversation" in repr(t)] == []
    # Every card the editor was shown is closed, the child's running command included (it stayed in_progress).
    [command] = [u["toolCallId"] for u in updates.of("tool_call") if u.get("kind") == "execute"]
    assert command.count(".") == 2  # the child's call, under the delegate card
    last: dict[str, str] = {}
    for u in updates.of("tool_call_update"):
        last[u["toolCallId"]] = u.get("status") or last.get(u["toolCallId"], "")
    assert last[command] == "failed"
    assert all(last.get(u["toolCallId"]) in ("completed", "failed") for u in updates.of("tool_call"))


async def test_a_child_edit_is_asked_for_counted_and_undone(srv: ScriptedServer, make_agent: AgentFactory,
                                                            workspace: Path, updates: Updates) -> None:
    goal = "Add a docstring to util.py"
    router = Router([delegate(goal=goal, toolsets=["edit"]), text("done")],
                    {goal: [tools(call("read_file", {"path": "src/util.py"})),
                            tools(call("edit_file", {"path": "src/util.py", "old_string": "def helper():",
                                                     "new_string": "def helper():\n    \"\"\"Help.\"\"\""})),
                            text("added it")]})
    srv.set_responder(router)
    host = AnsweringHost(workspace, updates)
    agent = make_agent(host=host, approval="ask", on_update=None)
    before = (workspace / "src" / "util.py").read_text()
    result = check(await agent.run_conversation("document util"))
    assert "Help." in (workspace / "src" / "util.py").read_text()
    [asked] = host.asked
    delegate_id = result.messages[2]["tool_calls"][0]["id"]
    assert asked.tool_call_id.startswith(f"{delegate_id}.1.")  # the child's call, as the editor knows it
    assert [c.path for c in result.files_changed] == ["src/util.py"]  # the parent's turn counts it
    [out] = tool_msgs(result)
    assert "src/util.py (+1 -0)" in out["content"]
    assert await agent.undo() == ["src/util.py"]
    assert (workspace / "src" / "util.py").read_text() == before


async def test_a_child_is_not_offered_delegate_task_unless_the_depth_allows(
        srv: ScriptedServer, make_agent: AgentFactory) -> None:
    # A model that delegates recursively: the child tries too, and is told the tool does not exist.
    router = Router([delegate(goal="Level one"), text("top done")],
                    {"Level one": [delegate(goal="Level two"), text("one done")], "Level two": [text("two done")]})
    srv.set_responder(router)
    result = check(await make_agent().run_conversation("recurse"))
    assert result.completed
    one = router.child_requests(srv.requests, "Level one")
    assert "delegate_task" not in one[0].tools and not router.child_requests(srv.requests, "Level two")
    assert "no tool named 'delegate_task'" in json.dumps(one[1].body)
    srv.clear()
    srv.set_responder(router)
    result = check(await make_agent(delegate_depth=2).run_conversation("recurse"))
    one, two = router.child_requests(srv.requests, "Level one"), router.child_requests(srv.requests, "Level two")
    assert "delegate_task" in one[0].tools and "delegate_task" not in two[0].tools
    assert "two done" in json.dumps(one[1].body)


async def test_bad_delegations_are_errors_and_start_no_child(srv: ScriptedServer, make_agent: AgentFactory) -> None:
    huge = "x" * 1_000_000
    bad = [{"goal": huge}, {"tasks": [{"goal": f"t{i}"} for i in range(50)]}, {"tasks": "do it"},
           {"tasks": [{"goal": {"text": "nested"}}]}, {"tasks": [{}]}, {"goal": "g", "tasks": [{"goal": "h"}]},
           {"goal": "g", "toolsets": ["root"]}, {"goal": "   "}, {}]
    srv.set_responder(Router([tools(*[call("delegate_task", a) for a in bad]), text("ok")]))
    result = check(await make_agent().run_conversation("go"))
    outs = tool_msgs(result)
    assert len(outs) == len(bad), outs
    for o in outs:
        assert o["content"].startswith("error"), o["content"][:300]
    assert f"at most {MAX_BRIEF_CHARS:,}" in outs[0]["content"] and len(outs[0]["content"]) < 2000
    assert "50" in outs[1]["content"] and str(MAX_TASKS) in outs[1]["content"]
    assert len(turn_requests(srv.requests)) == 2  # no child ever called the model


async def test_a_child_whose_provider_fails_is_an_error_result(srv: ScriptedServer, make_agent: AgentFactory) -> None:
    router = Router([delegate(goal=GOAL), text("recovered")], {GOAL: [error(500, "boom")]})
    srv.set_responder(router)
    result = check(await make_agent(max_retries=0).run_conversation("go"))
    assert result.completed and result.final_response == "recovered"
    [out] = tool_msgs(result)
    assert out["content"].startswith("error: subagent 1 of 1 did not finish (failed:") and "boom" in out["content"]
    assert [f.tool for f in result.failed_calls] == ["delegate_task"]


async def test_parallel_children_editing_one_file_both_land(srv: ScriptedServer, make_agent: AgentFactory,
                                                            workspace: Path) -> None:
    goals = ["Change line 2", "Change line 9"]
    edits = {goals[0]: ("line 2\n", "line two\n"), goals[1]: ("line 9\n", "line nine\n")}
    router = Router([delegate(tasks=[{"goal": g, "toolsets": ["edit"]} for g in goals]), text("both done")],
                    {g: [tools(call("read_file", {"path": "notes.txt"})),
                         tools(call("edit_file", {"path": "notes.txt", "old_string": old, "new_string": new})),
                         text(f"{g}: done")] for g, (old, new) in edits.items()})
    srv.set_responder(router)
    result = check(await make_agent(approval="yolo").run_conversation("edit both"))
    assert result.completed
    notes = (workspace / "notes.txt").read_text()
    assert "line two\n" in notes and "line nine\n" in notes, notes
    assert [c.path for c in result.files_changed] == ["notes.txt"]


async def test_a_refused_child_edit_is_reported_from_the_record(srv: ScriptedServer, make_agent: AgentFactory,
                                                                workspace: Path, updates: Updates) -> None:
    goal = "Write a new file"
    router = Router([delegate(goal=goal, toolsets=["edit"]), text("it was refused")],
                    {goal: [tools(call("write_file", {"path": "new.txt", "content": "new\n"})),
                            text("I wrote new.txt")]})  # the child's words; the record says otherwise
    srv.set_responder(router)
    host = AnsweringHost(workspace, updates, answers=("reject_once",))
    result = check(await make_agent(host=host, approval="ask", on_update=None).run_conversation("write"))
    assert not (workspace / "new.txt").exists() and len(host.asked) == 1
    [out] = tool_msgs(result)
    assert "changed no file" in out["content"] and "refused: " in out["content"] and "rejected by the user" in out["content"]
    assert result.files_changed == ()
