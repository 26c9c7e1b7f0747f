"""json mode and the native-mode fallback end to end, with the scripted provider playing the model:
the OpenAI-compatible provider's wire request, its conversion to ``tool_calls``, streaming, and a whole
agent turn (read a file, then answer) in ``tool_mode = "json"``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentls.agent.providers.base import ProviderRequest, StreamSink
from agentls.agent.providers.json_mode import FINAL_ANSWER, JSON_MODE_SYSTEM_NOTE
from agentls.agent.providers.openai import OpenAIProvider
from agentls.agent.scripted import ScriptedServer, text

from .conftest import TOOLS

README = "agentls test workspace: the quick brown fox.\n"


def _json(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments}, indent=2)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


def _provider(srv: ScriptedServer, client: httpx.AsyncClient, mode: str) -> OpenAIProvider:
    return OpenAIProvider(base_url=srv.openai_url, api_key="test", client=client, tool_mode=mode)


def _request(stream: bool = True) -> ProviderRequest:
    return ProviderRequest(model="m", system="You are a test.", tools=TOOLS, stream=stream,
                           messages=[{"role": "user", "content": "What does README.md say?"}])


class Collect:
    def __init__(self) -> None:
        self.deltas: list[str] = []

    async def __call__(self, delta: str) -> None:
        self.deltas.append(delta)


@pytest.mark.parametrize("stream", [True, False])
async def test_json_mode_call_becomes_tool_calls(srv: ScriptedServer, client: httpx.AsyncClient,
                                                 stream: bool) -> None:
    srv.push(text(_json("read_file", path="README.md"), chunk_size=3))
    shown = Collect()
    resp = await _provider(srv, client, "json").complete(_request(stream), StreamSink(on_text=shown))
    calls = resp.message.get("tool_calls") or []
    assert [c["function"]["name"] for c in calls] == ["read_file"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": "README.md"}
    assert resp.message.get("content") is None and resp.finish_reason == "tool_calls"
    assert shown.deltas == []  # the call's JSON is never shown as text
    body = srv.requests[-1].body
    variants = body["response_format"]["json_schema"]["schema"]["anyOf"]
    assert [v["properties"]["name"]["const"] for v in variants][-1] == FINAL_ANSWER
    assert srv.requests[-1].tools == [t["function"]["name"] for t in TOOLS]  # the template still sees them
    assert body["messages"][0] == {"role": "system", "content": "You are a test."}  # system prompt untouched
    assert body["messages"][-1]["content"].endswith(JSON_MODE_SYSTEM_NOTE)


@pytest.mark.parametrize("chunk_size", [1, 2, 7])
async def test_json_mode_final_answer_streams_as_text(srv: ScriptedServer, client: httpx.AsyncClient,
                                                      chunk_size: int) -> None:
    answer = 'It says "the quick brown fox".\nThat is all — é 😀'
    srv.push(text(_json(FINAL_ANSWER, text=answer), chunk_size=chunk_size))
    shown = Collect()
    resp = await _provider(srv, client, "json").complete(_request(), StreamSink(on_text=shown))
    assert resp.message.get("content") == answer and not resp.message.get("tool_calls")
    assert resp.finish_reason == "stop"
    assert "".join(shown.deltas) == answer
    assert len(shown.deltas) > 1  # streamed, not delivered at the end


async def test_native_mode_sends_no_response_format_and_parses_fenced_json(
        srv: ScriptedServer, client: httpx.AsyncClient) -> None:
    fenced = 'Let me look.\n```json\n{"name": "read_file", "arguments": {"path": "README.md"}}\n```'
    srv.push(text(fenced, chunk_size=5))
    resp = await _provider(srv, client, "native").complete(_request())
    assert "response_format" not in srv.requests[-1].body
    assert srv.requests[-1].body["messages"][-1]["content"] == "What does README.md say?"
    calls = resp.message.get("tool_calls") or []
    assert [c["function"]["name"] for c in calls] == ["read_file"]
    assert resp.message.get("content") == "Let me look." and resp.finish_reason == "tool_calls"


async def test_native_mode_leaves_example_json_alone(srv: ScriptedServer, client: httpx.AsyncClient) -> None:
    example = 'Your tool could take:\n```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```'
    srv.push(text(example))
    resp = await _provider(srv, client, "native").complete(_request())
    assert resp.message.get("content") == example and not resp.message.get("tool_calls")


# ----------------------------------------------------------------------------- a whole agent turn
@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text(README)
    return tmp_path


def _tool_results(messages: list[Any]) -> list[str]:
    return [str(m.get("content")) for m in messages if m.get("role") == "tool"]


@pytest.mark.parametrize(("mode", "first"), [
    ("json", _json("read_file", path="README.md")),
    ("native", 'I will read it.\n```json\n{"name": "read_file", "arguments": {"path": "README.md"}}\n```'),
])
async def test_agent_turn_reads_then_answers(workspace: Path, mode: str, first: str) -> None:
    from agentls.agent import AIAgent

    answer = "The README says: agentls test workspace: the quick brown fox."
    final = _json(FINAL_ANSWER, text=answer) if mode == "json" else answer
    async with ScriptedServer() as srv:
        srv.push(text(first, chunk_size=4), text(final, chunk_size=4))
        async with AIAgent(model="tiny", base_url=srv.openai_url, api_key="test", tool_mode=mode,
                           workspace=workspace) as agent:
            result = await agent.run_conversation("What does README.md say?")
    assert result.completed and result.exit_reason == "text_response", result.error
    assert result.final_response == answer
    calls = [c for m in result.messages for c in m.get("tool_calls") or []]
    assert [c["function"]["name"] for c in calls] == ["read_file"]
    assert any("the quick brown fox" in r for r in _tool_results(result.messages))
    # the model saw its earlier call as an ordinary tool call, and the README in a tool result
    second = srv.requests[1].body["messages"]
    assert any(m.get("tool_calls") for m in second if m["role"] == "assistant")
    assert any(m["role"] == "tool" and "quick brown fox" in str(m.get("content")) for m in second)
    assert ("response_format" in srv.requests[1].body) == (mode == "json")
