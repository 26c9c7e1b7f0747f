"""Subagents (``delegate_task``) under the parent's workflows and mode: the parent's hooks see and may block a
child's calls, SubagentStop may send a child on, plan mode and the approval mode reach children
(docs/workflows.md "Subagents", docs/acp.md "Plan mode", docs/loop.md §9.9)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.workflows.session import MAX_STOP_CONTINUES

from tests.core.helpers import AnsweringHost, check, tool_msgs
from tests.delegate_script import Router

from .conftest import Make, hook_program, hooks_toml, said, write

GOAL = "Publish the release"
LOGGER = "open(os.environ['AGENTLS_PROJECT_DIR'] + '/../{name}.jsonl', 'a').write(json.dumps(event) + '\\n')\n"


def _log(ws: Path, name: str) -> list[dict[str, Any]]:
    path = ws.parent / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _delegate(**args: Any) -> Any:
    return tools(call("delegate_task", args))


def _child_results(srv: ScriptedServer, router: Router, goal: str) -> list[str]:
    """The tool results the child's last request carried (what the child read)."""
    last = router.child_requests(srv.requests, goal)[-1]
    return [str(m.get("content")) for m in last.messages if m.get("role") == "tool"]


async def test_the_parents_pre_tool_use_hook_blocks_a_childs_command(make: Make, srv: ScriptedServer, ws: Path,
                                                                     home: Path, tmp_path: Path) -> None:
    guard = hook_program(home, "guard", LOGGER.format(name="pre") + (
        "if 'git push' in event['tool_input'].get('command', ''):\n"
        "    print('pushing is done by CI', file=sys.stderr); sys.exit(2)\n"))
    post = hook_program(home, "post", LOGGER.format(name="post"))
    write(home / "config.toml", hooks_toml([("PreToolUse", guard, "terminal", 10), ("PostToolUse", post, None, 10)]))
    router = Router([_delegate(goal=GOAL, toolsets=["terminal"]), text("parent done")],
                    {GOAL: [tools(call("terminal", {"command": "touch pushed && git push"})),
                            tools(call("terminal", {"command": "touch ran"})), text("child done")]})
    srv.set_responder(router)
    agent = make(session_db=tmp_path / "s.db")
    result = check(await agent.run_conversation("release it"))
    assert result.final_response == "parent done"
    assert not (ws / "pushed").exists() and (ws / "ran").exists()
    blocked, ran = _child_results(srv, router, GOAL)
    assert "PreToolUse hook blocked" in blocked and "pushing is done by CI" in blocked
    assert "PreToolUse hook blocked" not in ran
    assert agent.store is not None
    [child] = await agent.store.child_sessions(agent.session_id)
    delegate_id = result.messages[2]["tool_calls"][0]["id"]
    pre = _log(ws, "pre")
    assert [e["tool_input"]["command"] for e in pre] == ["touch pushed && git push", "touch ran"]
    # A child's hook input: its own session id, and its parent's session and delegate_task call.
    assert all(e["session_id"] == child.id and e["parent_session_id"] == agent.session_id
               and e["parent_tool_use_id"] == delegate_id for e in pre)
    # PostToolUse sees the child's calls (the blocked one did not run, so only the one that ran) and then the
    # parent's own delegate_task call, which has no parent fields.
    post_events = _log(ws, "post")
    assert [(e["tool_name"], e["session_id"]) for e in post_events] == [
        ("terminal", child.id), ("delegate_task", agent.session_id)]
    assert post_events[0]["parent_session_id"] == agent.session_id and "parent_session_id" not in post_events[1]


async def test_subagent_stop_sends_the_child_on_and_stop_is_the_parents(make: Make, srv: ScriptedServer, ws: Path,
                                                                        home: Path) -> None:
    once = hook_program(home, "sub", LOGGER.format(name="sub") + (
        "if not event['stop_hook_active']:\n    print('also list the tests', file=sys.stderr); sys.exit(2)\n"))
    stop = hook_program(home, "stop", LOGGER.format(name="stop"))
    write(home / "config.toml", hooks_toml([("SubagentStop", once, None, 10), ("Stop", stop, None, 10)]))
    router = Router([_delegate(goal=GOAL), text("parent done")], {GOAL: [text("first answer"), text("second answer")]})
    srv.set_responder(router)
    agent = make()
    result = check(await agent.run_conversation("go"))
    [out] = tool_msgs(result)
    assert "second answer" in out["content"]
    child_reqs = router.child_requests(srv.requests, GOAL)
    assert len(child_reqs) == 2 and "also list the tests" in (child_reqs[1].last_user_text or "")
    sub = _log(ws, "sub")
    assert [(e["hook_event_name"], e["stop_hook_active"], e["last_assistant_message"]) for e in sub] == [
        ("SubagentStop", False, "first answer"), ("SubagentStop", True, "second answer")]
    assert all(e["parent_session_id"] == agent.session_id for e in sub)
    # Stop fired once: for the parent's answer, never for a child's.
    assert [(e["session_id"], e["last_assistant_message"]) for e in _log(ws, "stop")] == [
        (agent.session_id, "parent done")]


async def test_a_subagent_stop_hook_that_never_lets_go_is_bounded(make: Make, srv: ScriptedServer, ws: Path,
                                                                  home: Path) -> None:
    nag = hook_program(home, "nag", "print('keep going', file=sys.stderr); sys.exit(2)\n")
    write(home / "config.toml", hooks_toml([("SubagentStop", nag, None, 10)]))
    router = Router([_delegate(goal=GOAL), text("parent done")], {GOAL: [text("child answer")]})
    srv.set_responder(router)
    updates: list[dict[str, Any]] = []
    agent = make(updates=updates)
    result = check(await agent.run_conversation("go"))
    assert result.final_response == "parent done"
    assert len(router.child_requests(srv.requests, GOAL)) == 1 + MAX_STOP_CONTINUES
    assert "SubagentStop hooks asked to continue" in said(updates)  # the user is told, on the parent's stream


async def test_plan_mode_refuses_a_childs_edits_and_commands_unasked(make: Make, srv: ScriptedServer,
                                                                     ws: Path) -> None:
    router = Router([_delegate(goal=GOAL, toolsets=["edit", "terminal"]), text("here is the plan")],
                    {GOAL: [tools(call("write_file", {"path": "new.txt", "content": "x\n"}),
                                  call("terminal", {"command": "touch ran"}),
                                  call("read_file", {"path": "README.md"})), text("could only read")]})
    srv.set_responder(router)
    host = AnsweringHost(ws)
    agent = make(host=host, approval="ask")
    agent.set_mode("plan")
    result = check(await agent.run_conversation("plan the release"))
    [out] = tool_msgs(result)
    assert "could only read" in out["content"] and "plan mode" not in out["content"].split("\n")[0]
    wrote, ran, read = _child_results(srv, router, GOAL)
    assert "plan mode" in wrote and "plan mode" in ran and "# demo" in read
    assert not (ws / "new.txt").exists() and not (ws / "ran").exists()
    assert host.asked == []  # refused at once, no permission prompt


async def test_a_child_follows_the_mode_the_client_switched_to(make: Make, srv: ScriptedServer, ws: Path) -> None:
    router = Router([_delegate(goal=GOAL, toolsets=["edit"]), text("done")],
                    {GOAL: [tools(call("write_file", {"path": "new.txt", "content": "x\n"})), text("wrote it")]})
    srv.set_responder(router)
    host = AnsweringHost(ws, answers=("reject_once",))
    agent = make(host=host, approval="ask")
    agent.set_mode("auto-edit")  # as session/set_mode does, after the agent was built with "ask"
    check(await agent.run_conversation("write it"))
    assert (ws / "new.txt").read_text() == "x\n" and host.asked == []


async def test_a_childs_brief_is_not_expanded_as_a_command(make: Make, srv: ScriptedServer, ws: Path) -> None:
    write(ws / ".agentls" / "commands" / "deploy.md", "DEPLOY-BODY run the deploy script\n")
    goal = "/deploy the staging branch"
    router = Router([_delegate(goal=goal), text("done")], {goal: [text("child answer")]})
    srv.set_responder(router)
    agent = make()
    check(await agent.run_conversation("go"))
    [first] = router.child_requests(srv.requests, goal)
    assert (first.last_user_text or "").startswith(goal) and "DEPLOY-BODY" not in json.dumps(first.body)
