"""docs/loop.md §2.4: a tool that raises or times out is an error result and the loop goes on; results are capped."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.tools.base import Tool, ToolContext, ToolOutput
from agentls.agent.tools.registry import BUILTIN_TOOLS

from .conftest import AgentFactory
from .helpers import SlowHost, Updates, check, tool_msgs

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def _custom(name: str, run: Any, *, timeout: float | None = 120.0, read_only: bool = True) -> Tool:
    return Tool(name=name, description=f"test tool {name}", parameters=EMPTY_SCHEMA, kind="other", run=run,
                read_only=read_only, timeout=timeout)


@pytest.mark.parametrize("exc", [RuntimeError("disk on fire"), PermissionError(13, "denied"),
                                 ValueError("bad bytes"), KeyError("inode")])
async def test_host_failure_becomes_error_result(make_agent: AgentFactory, srv: ScriptedServer, workspace: Path,
                                                 updates: Updates, exc: Exception) -> None:
    host = SlowHost(workspace, updates, read_error=exc)
    srv.push(tools(call("read_file", {"path": "README.md"})), text("it failed, moving on"))
    result = check(await make_agent(host=host).run_conversation("read"))
    (res,) = tool_msgs(result)
    assert res["content"].startswith("error") and type(exc).__name__ in res["content"]
    assert result.completed and result.final_response == "it failed, moving on"
    assert [u.get("status") for u in updates.of("tool_call_update")][-1] == "failed"


async def test_raising_tool_does_not_disturb_its_batch(make_agent: AgentFactory, srv: ScriptedServer,
                                                       wire: str) -> None:
    async def explode(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
        await asyncio.sleep(0.01)
        raise RuntimeError("kaboom")

    srv.push(tools(call("read_file", {"path": "README.md"}), call("explode", {}),
                   call("read_file", {"path": "notes.txt"})), text("two of three"))
    agent = make_agent(wire, tools=[*BUILTIN_TOOLS, _custom("explode", explode)])
    result = check(await agent.run_conversation("go"))
    first, bad, last = (r["content"] for r in tool_msgs(result))
    assert "Demo project" in first and "line 4" in last
    assert bad.startswith("error") and "kaboom" in bad
    assert result.completed


async def test_hanging_tool_times_out_and_is_stopped(make_agent: AgentFactory, srv: ScriptedServer,
                                                     stream: bool) -> None:
    state = {"cleaned": False}

    async def hang(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
        try:
            await asyncio.sleep(30)
        finally:
            state["cleaned"] = True
        return ToolOutput("never")

    srv.push(tools(call("hang", {})), text("it hung"))
    agent = make_agent(stream=stream, tools=[*BUILTIN_TOOLS, _custom("hang", hang, timeout=0.3)])
    start = time.monotonic()
    result = check(await asyncio.wait_for(agent.run_conversation("go"), 10))
    assert time.monotonic() - start < 2
    (res,) = tool_msgs(result)
    assert res["content"].startswith("error") and "timed out" in res["content"]
    assert state["cleaned"] and result.completed and result.final_response == "it hung"


async def test_hanging_tool_times_out_inside_a_parallel_batch(make_agent: AgentFactory,
                                                              srv: ScriptedServer) -> None:
    async def hang(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
        await asyncio.sleep(30)
        return ToolOutput("never")

    srv.push(tools(call("hang", {}), call("read_file", {"path": "README.md"})), text("ok"))
    agent = make_agent(tools=[*BUILTIN_TOOLS, _custom("hang", hang, timeout=0.3)])
    result = check(await asyncio.wait_for(agent.run_conversation("go"), 10))
    hung, read = (r["content"] for r in tool_msgs(result))
    assert "timed out" in hung and "Demo project" in read


MARKER = re.compile(r"\[\.\.\. (\d+) (?:characters|chars|bytes)[^\]]*\]")


async def _read_big(make_agent: AgentFactory, srv: ScriptedServer, limit: int) -> str:
    srv.push(tools(call("read_file", {"path": "big.txt"})), text("ok"))
    result = check(await make_agent(tool_output_limit=limit).run_conversation("read big"))
    content: str = tool_msgs(result)[0]["content"]
    return content


async def test_results_are_capped_head_and_tail_with_an_exact_marker(make_agent: AgentFactory,
                                                                     srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"row {i:04d} of the big file\n" for i in range(1, 1001)))
    full = await _read_big(make_agent, srv, 1_000_000)
    capped = await _read_big(make_agent, srv, 3000)
    assert len(full) > 20_000 and len(capped) < 3300
    match = MARKER.search(capped)
    assert match, capped[1900:2200]
    head, tail = capped[:match.start()].rstrip("\n"), capped[match.end():].lstrip("\n")
    assert full.startswith(head) and full.endswith(tail)
    assert "row 0001" in head and "row 1000" in tail
    assert int(match.group(1)) == len(full) - len(head) - len(tail), "the marker must say how much was cut"


async def test_custom_tool_output_is_capped(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    body = "HEAD-" + "m" * 100_000 + "-TAIL"

    async def loud(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
        return ToolOutput(body)

    srv.push(tools(call("loud", {})), text("ok"))
    agent = make_agent(tools=[*BUILTIN_TOOLS, _custom("loud", loud)], tool_output_limit=5000)
    result = check(await agent.run_conversation("go"))
    content = tool_msgs(result)[0]["content"]
    assert content.startswith("HEAD-") and content.endswith("-TAIL") and len(content) < 5300
    match = MARKER.search(content)
    assert match
    head, tail = content[:match.start()].rstrip("\n"), content[match.end():].lstrip("\n")
    assert int(match.group(1)) == len(body) - len(head) - len(tail)
    assert srv.requests[1].raw.count(b"m" * 6000) == 0  # the model never sees the uncapped text


async def test_terminal_output_is_capped(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    srv.push(tools(call("terminal", {"command": "seq 1 50000"})), text("ok"))
    result = check(await make_agent(approval="yolo", tool_output_limit=4000).run_conversation("count"))
    content = tool_msgs(result)[0]["content"]
    assert len(content) < 4600
    assert "\n1\n2\n3\n" in content and content.rstrip().endswith("50000")
    assert "omitted" in content
