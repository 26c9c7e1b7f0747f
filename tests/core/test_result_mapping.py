"""docs/loop.md §1.5: ``TurnResult`` also reads as the result dictionary, with exactly the keys the doc's table
lists (read from the doc, so the doc and the code cannot drift apart)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from agentls.agent.result import ExitReason, TurnResult
from agentls.agent.scripted import ScriptedServer, call, error, text, tools

from .conftest import AgentFactory
from .helpers import check

LOOP_MD = Path(__file__).resolve().parents[2] / "docs" / "loop.md"


def documented_keys() -> list[str]:
    """The first column of the field table in §1.5, in order."""
    section = LOOP_MD.read_text().split("### 1.5 ", 1)[1].split("\n### ", 1)[0]
    table = section.split("| field | type | meaning |", 1)[1].split("\n\n", 1)[0]
    keys = re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.M)
    assert len(keys) >= 15, f"the §1.5 table of docs/loop.md was not found or changed shape: {keys}"
    return keys


def test_the_mapping_has_exactly_the_documented_keys() -> None:
    r = TurnResult("s", ExitReason.TEXT_RESPONSE, final_response="hi")
    assert isinstance(r, Mapping)
    assert set(r) == set(documented_keys())
    assert len(r) == len(documented_keys())
    assert {"final_response", "messages", "completed", "api_calls", "partial"} <= set(r)


async def test_a_real_turn_reads_both_ways(make_agent: AgentFactory, srv: ScriptedServer, stream: bool) -> None:
    agent = make_agent(stream=stream)
    srv.push(tools(call("read_file", {"path": "README.md"})), text("read it"))
    r = check(await agent.run_conversation("what is in the README?"))
    for key in documented_keys():
        assert key in r
        typed = getattr(r, key)
        value = r[key]
        if isinstance(typed, (str, bool, int)) or typed is None:
            assert value == typed, key  # exit_reason is a StrEnum: equal to its value
        elif isinstance(typed, tuple):
            assert value == [x.to_json() if hasattr(x, "to_json") else x for x in typed], key
        else:
            assert value == typed, key
    assert r["final_response"] == "read it" and r["completed"] is True and r.get("partial") is False
    assert r["api_calls"] == 2 and r["messages"] == r.messages
    assert r.get("no such key") is None and "no such key" not in r
    plain = json.loads(json.dumps(dict(r)))  # JSON-serialisable as it is
    assert plain["exit_reason"] == "text_response" and plain["messages"][0]["role"] == "system"
    assert r.to_json() == {k: v for k, v in dict(r).items()
                           if k not in ("error", "pending_steer", "cleanup_errors", "tools_stopped", "unmade_change",
                                         "tests_failing")}


async def test_a_failed_turn_in_the_mapping(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    agent = make_agent(max_retries=0)
    srv.push(error(401))
    r = check(await agent.run_conversation("hi"))
    assert r["exit_reason"] == "failed" and r["completed"] is False and r["partial"] is True
    assert isinstance(r["error"], dict) and r["error"]["category"]
    assert r["final_response"] is None and r.to_json()["error"] == r["error"]
    json.dumps(dict(r))


def test_the_mapping_is_read_only() -> None:
    r = TurnResult("s", ExitReason.TEXT_RESPONSE)
    with pytest.raises(TypeError):
        r["final_response"] = "x"  # type: ignore[index]
    with pytest.raises(KeyError):
        r[0]  # type: ignore[index]  # a key that is not a string is simply missing


async def test_chat_returns_the_final_text(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    agent = make_agent()
    srv.push(text("pong"))
    assert await agent.chat("ping") == "pong"
