"""Shapes with no public recording found (tests/providers/corpus/README.md), built from the providers'
documented wire formats and marked as such: parallel tool calls with quoted arguments, a message_start
that carries content, interleaved thinking across tool calls."""

from __future__ import annotations

import json

import httpx

from agentls.agent.providers.anthropic import AnthropicProvider
from agentls.agent.providers.base import ProviderRequest
from agentls.agent.providers.openai import OpenAIProvider
from agentls.agent.scripted import ScriptedServer, text
from agentls.agent.scripted.recorded import frame_chunks
from agentls.agent.scripted.replies import Reply

TOOLS = [{"type": "function", "function": {"name": n, "description": "", "parameters": {"type": "object"}}}
         for n in ("grep", "read_file")]


def chat(*deltas: dict, finish: str = "tool_calls") -> str:
    lines = [json.dumps({"choices": [{"index": 0, "delta": d, "finish_reason": None}]}) for d in deltas]
    lines.append(json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    return frame_chunks("\n".join(lines))


async def test_parallel_calls_with_quoted_arguments_and_a_delta_without_index(srv: ScriptedServer) -> None:
    quoted = json.dumps({"pattern": 'say "hi"\\n', "path": "a b.py"})
    srv.push(Reply(recorded=chat(
        {"role": "assistant", "content": None, "tool_calls": []},
        {"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "grep", "arguments": ""}}]},
        {"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                         "function": {"name": "read_file", "arguments": '{"path": "x.py"}'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": quoted[:9]}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": quoted[9:]}}]},
        {"tool_calls": [{"id": "call_c", "function": {"name": "read_file", "arguments": {"path": "y.py"}}}]})))
    async with httpx.AsyncClient() as client:
        p = OpenAIProvider(base_url=srv.openai_url, api_key="k", client=client)
        r = await p.complete(ProviderRequest(model="m", system="", messages=[{"role": "user", "content": "go"}],
                                             tools=TOOLS))
    calls = [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in r.message["tool_calls"]]
    assert calls == [("call_a", "grep", {"pattern": 'say "hi"\\n', "path": "a b.py"}),
                     ("call_b", "read_file", {"path": "x.py"}), ("call_c", "read_file", {"path": "y.py"})]


async def test_a_message_start_that_carries_content_and_interleaved_thinking(srv: ScriptedServer) -> None:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "c",
                                              "content": [{"type": "thinking", "thinking": "First I look. ",
                                                           "signature": ""}], "usage": {"input_tokens": 5}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Then I read."}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig-1"}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1",
                                                                      "name": "grep", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"pattern"'}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ': "x"}'}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"}]
    srv.push(Reply(recorded=frame_chunks("\n".join(json.dumps(e) for e in events))), text("done", reasoning="ok"))
    shown: list[str] = []

    async def on_reasoning(d: str) -> None:
        shown.append(d)

    from agentls.agent.providers.base import StreamSink

    async with httpx.AsyncClient() as client:
        p = AnthropicProvider(base_url=srv.anthropic_url, api_key="k", client=client, thinking_budget=2048)
        first = await p.complete(ProviderRequest(model="c", system="", messages=[{"role": "user", "content": "go"}],
                                                 tools=TOOLS), StreamSink(on_reasoning=on_reasoning))
        assert "".join(shown) == "First I look. Then I read."
        assert first.message["tool_calls"][0]["function"]["arguments"] == '{"pattern": "x"}'
        history = [{"role": "user", "content": "go"}, first.message,
                   {"role": "tool", "tool_call_id": "toolu_1", "content": "found"}]
        await p.complete(ProviderRequest(model="c", system="", messages=history, tools=TOOLS))  # type: ignore[arg-type]
    sent = srv.requests[-1]
    assert sent.rejected is None
    assert sent.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert sent.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert sent.body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "First I look. Then I read.",
                                                      "signature": "sig-1"}
