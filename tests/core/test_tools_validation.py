"""docs/loop.md §2.4: every tool call is validated before dispatch (name repair, JSON repair, cut-off arguments)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools, truncated

from .conftest import AgentFactory
from .helpers import BUILTIN_NAMES, check, tool_msgs, wire_tool_results

MISNAMED = ["Read_File", "READ_FILE", "read-file", "read file", "readFile", "ReadFile", "read_file_tool",
            "read_fiel", "raed_file"]


@pytest.mark.parametrize("name", MISNAMED)
async def test_obvious_name_is_repaired_and_runs(make_agent: AgentFactory, srv: ScriptedServer, name: str) -> None:
    srv.push(tools(call(name, {"path": "notes.txt"})), text("ok"))
    result = check(await make_agent().run_conversation("read the notes"))
    (res,) = tool_msgs(result)
    assert "line 7" in res["content"] and not res["content"].startswith("error")
    assert result.messages[2]["tool_calls"][0]["function"]["name"] == "read_file"


@pytest.mark.parametrize("name", ["launch_rockets", "delete_everything", "x"])
async def test_unknown_name_gets_an_error_listing_the_tools(make_agent: AgentFactory, srv: ScriptedServer,
                                                            wire: str, name: str) -> None:
    srv.push(tools(call(name, {"path": "notes.txt"}), call("read_file", {"path": "README.md"})), text("sorry"))
    result = check(await make_agent(wire).run_conversation("go"))
    bad, good = tool_msgs(result)
    assert all(tool in bad["content"] for tool in BUILTIN_NAMES), bad["content"]
    assert name in bad["content"]
    assert "Demo project" in good["content"]
    assert result.completed and result.final_response == "sorry"
    assert all(tool in wire_tool_results(srv.requests[1])[0] for tool in BUILTIN_NAMES)


REPAIRABLE = {
    "trailing comma": '{"path": "notes.txt",}',
    "missing brace": '{"path": "notes.txt"',
    "code fence": '```json\n{"path": "notes.txt"}\n```',
    "double encoded": '"{\\"path\\": \\"notes.txt\\"}"',
    "text around": 'Arguments: {"path": "notes.txt"}',
}


@pytest.mark.parametrize("raw", REPAIRABLE.values(), ids=REPAIRABLE.keys())
async def test_broken_json_repaired_when_unambiguous(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                                     stream: bool, raw: str) -> None:
    srv.push(tools(call("read_file", raw)), text("ok"))
    result = check(await make_agent(wire, stream).run_conversation("read"))
    (res,) = tool_msgs(result)
    assert "line 9" in res["content"], res["content"]


UNREPAIRABLE = {
    "two objects": '{"path": "a.txt", "content": "A"} {"path": "b.txt", "content": "B"}',
    "not json": "path=a.txt content=A",
    "unterminated string": '{"path": "a.txt", "content": "A',
    "array of two": '[{"path": "a.txt", "content": "A"}, {"path": "b.txt", "content": "B"}]',
}


@pytest.mark.parametrize("raw", UNREPAIRABLE.values(), ids=UNREPAIRABLE.keys())
async def test_ambiguous_json_is_an_error_result_and_nothing_runs(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, wire: str, raw: str) -> None:
    srv.push(tools(call("write_file", raw)), text("I will retry"))
    result = check(await make_agent(wire, approval="yolo").run_conversation("write"))
    (res,) = tool_msgs(result)
    assert res["content"].lower().startswith("error") and "json" in res["content"].lower()
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
    assert result.completed


async def test_schema_violations_are_error_results(make_agent: AgentFactory, srv: ScriptedServer,
                                                   workspace: Path) -> None:
    srv.push(tools(call("write_file", {"path": "x.txt"}), call("read_file", {"path": "notes.txt", "limit": "all"})),
             text("ok"))
    result = check(await make_agent(approval="yolo").run_conversation("go"))
    missing, wrong_type = tool_msgs(result)
    assert missing["content"].startswith("error") and "content" in missing["content"]
    assert wrong_type["content"].startswith("error") and "limit" in wrong_type["content"]
    assert not (workspace / "x.txt").exists()


async def test_truncated_arguments_never_execute(make_agent: AgentFactory, srv: ScriptedServer, workspace: Path,
                                                 wire: str, stream: bool) -> None:
    """``finish_reason=length`` with cut-off arguments: nothing runs, not even a call whose cut happens to
    leave parseable JSON; the model is told, and the loop goes on."""
    srv.push(truncated(call("write_file", {"path": "big.txt", "content": "x" * 400}),
                       call("terminal", {"command": "touch ran.txt"})),
             text("I will write it in parts"))
    result = check(await make_agent(wire, stream, approval="yolo").run_conversation("write a big file"))
    assert not (workspace / "big.txt").exists() and not (workspace / "ran.txt").exists()
    results = tool_msgs(result)
    assert len(results) == 2 and all(r["content"].startswith("error") for r in results)
    assert "cut off" in results[0]["content"] or "limit" in results[0]["content"]
    assert result.final_response == "I will write it in parts"


async def test_length_finish_with_complete_json_still_not_executed(make_agent: AgentFactory, srv: ScriptedServer,
                                                                   workspace: Path, wire: str) -> None:
    """Demanding reading: with ``finish_reason=length`` the last call may be cut even if it parses."""
    srv.push(tools(call("write_file", {"path": "half.txt", "content": "the first half of"}),
                   finish_reason="length"), text("ok"))
    result = check(await make_agent(wire, approval="yolo").run_conversation("write"))
    assert not (workspace / "half.txt").exists()
    assert tool_msgs(result)[0]["content"].startswith("error")
