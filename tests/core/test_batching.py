"""docs/loop.md §2.4: batches split at barriers; read-only calls run together; results in the model's call order."""

from __future__ import annotations

from pathlib import Path

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import AgentFactory
from .helpers import AnsweringHost, SlowHost, Updates, check, tool_msgs


def _all_started_before_any_ended(host: SlowHost, op: str) -> bool:
    """Event order, not wall time: every ``op`` started before the first one finished (they overlapped)."""
    kinds = [kind for kind, _, _ in host.log if kind.startswith(op + "-")]
    return bool(kinds) and kinds == sorted(kinds, key=lambda kind: kind.endswith("-end"))


async def test_eight_reads_run_concurrently_and_results_keep_call_order(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, updates: Updates, stream: bool) -> None:
    for i in range(8):
        (workspace / f"f{i}.txt").write_text(f"content of file {i}\n")
    # The first call is the slowest, so completion order is the reverse of call order.
    host = SlowHost(workspace, updates, read_delay=lambda p: 0.4 - 0.04 * int(p.stem[1:]))
    calls = [call("read_file", {"path": f"f{i}.txt"}) for i in range(8)]
    srv.push(tools(*calls), text("read them all"))
    agent = make_agent(stream=stream, host=host)
    result = check(await agent.run_conversation("read every file"))
    assert host.max_active == 8
    assert _all_started_before_any_ended(host, "read"), host.log
    results = tool_msgs(result)
    ids = [c["id"] for c in result.messages[2]["tool_calls"]]
    assert [r["tool_call_id"] for r in results] == ids
    assert all(f"content of file {i}" in r["content"] for i, r in enumerate(results))
    ends = [rel for op, rel, _ in host.log if op == "read-end"]
    assert ends == [f"f{i}.txt" for i in reversed(range(8))]  # they really did finish out of order


async def test_mixed_read_only_tools_share_a_batch(make_agent: AgentFactory, srv: ScriptedServer,
                                                   workspace: Path, updates: Updates) -> None:
    host = SlowHost(workspace, updates, read_delay=0.3)
    srv.push(tools(call("read_file", {"path": "README.md"}), call("list_dir", {}),
                   call("read_file", {"path": "notes.txt"}), call("search_files", {"pattern": "def"}),
                   call("read_file", {"path": "src/util.py"})), text("ok"))
    result = check(await make_agent(host=host).run_conversation("look"))
    assert host.max_active == 3 and _all_started_before_any_ended(host, "read"), host.log
    contents = [r["content"] for r in tool_msgs(result)]
    assert "Demo project" in contents[0] and "src/" in contents[1] and "line 10" in contents[2]
    assert "def greet" in contents[3] and "return 42" in contents[4]


async def test_writes_to_one_path_keep_their_order(make_agent: AgentFactory, srv: ScriptedServer,
                                                   workspace: Path, updates: Updates) -> None:
    delays = iter([0.3, 0.15, 0.0])
    host = SlowHost(workspace, updates, write_delay=lambda p: next(delays))
    srv.push(tools(*(call("write_file", {"path": "out.txt", "content": f"version {n}\n"}) for n in (1, 2, 3))),
             text("written"))
    result = check(await make_agent(host=host, approval="auto-edit").run_conversation("write thrice"))
    assert (workspace / "out.txt").read_text() == "version 3\n"
    assert host.max_active == 1
    assert [op for op, _, _ in host.log if op.startswith("write")] == ["write-start", "write-end"] * 3
    assert all(not r["content"].startswith("error") for r in tool_msgs(result))


async def test_read_after_write_sees_the_write(make_agent: AgentFactory, srv: ScriptedServer, workspace: Path,
                                               updates: Updates) -> None:
    """A write is a barrier: the read before it sees the old text, the read after it the new text."""
    host = SlowHost(workspace, updates, read_delay=0.1, write_delay=0.1)
    srv.push(tools(call("read_file", {"path": "notes.txt"}),
                   call("write_file", {"path": "notes.txt", "content": "rewritten\n" * 10}),
                   call("read_file", {"path": "notes.txt"})), text("ok"))
    result = check(await make_agent(host=host, approval="auto-edit").run_conversation("rewrite"))
    before, wrote, after = (r["content"] for r in tool_msgs(result))
    assert "line 5" in before and "rewritten" not in before
    assert not wrote.startswith("error")
    assert "rewritten" in after and "line 5" not in after


async def test_terminal_commands_keep_their_order(make_agent: AgentFactory, srv: ScriptedServer,
                                                  workspace: Path) -> None:
    srv.push(tools(call("terminal", {"command": "sleep 0.3; echo a >> order.log"}),
                   call("terminal", {"command": "sleep 0.1; echo b >> order.log"}),
                   call("terminal", {"command": "echo c >> order.log"})), text("ran"))
    result = check(await make_agent(approval="yolo").run_conversation("run"))
    assert (workspace / "order.log").read_text() == "a\nb\nc\n"
    assert all("exit code 0" in r["content"] or " 0" in r["content"] for r in tool_msgs(result))


async def test_calls_needing_permission_are_asked_in_order(make_agent: AgentFactory, srv: ScriptedServer,
                                                           workspace: Path, updates: Updates) -> None:
    host = AnsweringHost(workspace, updates, ["allow_once"])
    srv.push(tools(call("write_file", {"path": "a.txt", "content": "A"}),
                   call("terminal", {"command": "cat a.txt > b.txt"}), call("read_file", {"path": "b.txt"}),
                   call("edit_file", {"path": "b.txt", "old_string": "A", "new_string": "B"})), text("ok"))
    result = check(await make_agent(host=host, approval="ask").run_conversation("go"))
    assert [r.kind for r in host.asked] == ["edit", "execute", "edit"]
    assert (workspace / "b.txt").read_text() == "B"
    assert all(not r["content"].startswith("error") for r in tool_msgs(result))


async def test_results_keep_order_when_some_calls_fail(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    srv.push(tools(call("read_file", {"path": "missing.txt"}), call("nonexistent_tool", {}),
                   call("read_file", {"path": "README.md"}), call("read_file", "{broken"),
                   call("list_dir", {"path": "src"})), text("ok"))
    result = check(await make_agent().run_conversation("go"))
    contents = [r["content"] for r in tool_msgs(result)]
    assert [c.startswith("error") for c in contents] == [True, True, False, True, False]
    assert "Demo project" in contents[2] and "app.py" in contents[4]
