"""Every recorded stream of the corpus (tests/providers/corpus/README.md), replayed through the real
providers over HTTP: the answer, the thoughts shown (once, never in the answer), the tool calls, and the
next request, checked by the strict scripted server the way the real API checks it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentls.agent.providers.anthropic import AnthropicProvider
from agentls.agent.providers.base import ProviderRequest, ProviderResponse, StreamSink
from agentls.agent.providers.errors import ProviderError
from agentls.agent.providers.openai import OpenAIProvider
from agentls.agent.providers.responses import ResponsesProvider
from agentls.agent.scripted import ScriptedServer, replay, text
from agentls.agent.types import Message

CORPUS = Path(__file__).parent / "corpus"
TOOLS = [{"type": "function", "function": {"name": n, "description": "", "parameters": {"type": "object"}}}
         for n in ("weather", "get_capital", "updateIssueList", "get_user_country", "calculator", "final_result",
                   "webSearchTool", "load_capability")]


@dataclass
class Case:
    file: str
    wire: str  # openai | anthropic | responses
    model: str = "m"
    answer: str | None = None  # exact; None: no answer text
    answer_has: str = ""
    thoughts_has: str = ""  # a piece of the thoughts; "" means no thoughts at all
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    finish: str = "stop"
    stream: bool = True


CASES = [
    Case("openai/azure-empty-first-chunk.chunks.txt", "openai", answer="Capital of Denmark."),
    Case("openai/tool-call.sse", "openai", calls=[("get_capital", {"country": "UK"})], finish="tool_calls"),
    Case("openai/text-extra-fields.sse", "openai", answer="Paris."),
    Case("deepseek/reasoning-tool-call.chunks.txt", "openai", model="deepseek-reasoner",
         thoughts_has="The user is asking for the weather", calls=[("weather", {"location": "San Francisco"})],
         finish="tool_calls"),
    Case("deepseek/reasoning-tool-call.response.json", "openai", model="deepseek-v4-flash", stream=False,
         answer="Let me load the dice rolling capability!", thoughts_has="The user wants to play a dice game",
         calls=[("load_capability", {"id": "DICE_ROLL"})], finish="tool_calls"),
    Case("xai/reasoning-tool-call.chunks.txt", "openai", model="grok-3-mini", thoughts_has="First, the user is",
         calls=[("weather", {"location": "San Francisco"})], finish="tool_calls"),
    Case("mistral/content-array-thinking.chunks.txt", "openai", model="magistral-medium-2507", answer="2 + 2 = 4",
         thoughts_has="The user is asking for 2+2. This is basic arithmetic. 2+2=4."),
    Case("mistral/tool-call-without-index.chunks.txt", "openai", model="mistral-small-latest",
         calls=[("weather", {"location": "San Francisco"})], finish="tool_calls"),
    Case("mistral/incremental-tool-call.chunks.txt", "openai", model="mistral-medium",
         calls=[("webSearchTool", {"query": "current Berlin weather"})], finish="tool_calls"),
    Case("anthropic/thinking-text.sse", "anthropic", answer_has="safely crossing the street", thoughts_has="straightforward question"),
    Case("anthropic/redacted-thinking.sse", "anthropic", answer_has="I notice that you've sent"),
    Case("anthropic/signature-only-thinking.chunks.txt", "anthropic", answer_has="25 ×"),
    Case("anthropic/tool-no-args.chunks.txt", "anthropic", answer="I'll update the issue list for you.",
         calls=[("updateIssueList", {})], finish="tool_calls"),
    Case("anthropic/thinking-tool-use.response.json", "anthropic", stream=False,
         answer_has="largest city in your country", thoughts_has="get_user_country function first",
         calls=[("get_user_country", {})], finish="tool_calls"),
    Case("anthropic/refusal.chunks.txt", "anthropic", finish="content_filter"),
    Case("responses/reasoning-function-call.sse", "responses", calls=[("final_result", {"result": 6666})],
         finish="tool_calls"),
    Case("responses/reasoning-summary-function-call.chunks.txt", "responses",
         thoughts_has="Calculating step-by-step using calculator",
         calls=[("calculator", {"a": 12, "b": 7, "op": "add"})], finish="tool_calls"),
    Case("responses/text.chunks.txt", "responses", answer="The final result is **570**."),
    Case("responses/azure-function-call.chunks.txt", "responses", calls=[("weather", {"location": "San Francisco"})],
         finish="tool_calls"),
]


class Shown:
    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []

    def sink(self) -> StreamSink:
        async def on_text(d: str) -> None:
            self.log.append(("text", d))

        async def on_reasoning(d: str) -> None:
            self.log.append(("thought", d))

        return StreamSink(on_text=on_text, on_reasoning=on_reasoning)

    def joined(self, kind: str) -> str:
        return "".join(d for k, d in self.log if k == kind)


def provider(case: Case, srv: ScriptedServer, client: httpx.AsyncClient) -> Any:
    if case.wire == "anthropic":
        return AnthropicProvider(base_url=srv.anthropic_url, api_key="k", client=client)
    if case.wire == "responses":
        return ResponsesProvider(base_url=srv.openai_url, api_key="k", client=client)
    return OpenAIProvider(base_url=srv.openai_url, api_key="k", client=client)


def request(case: Case, messages: list[Message]) -> ProviderRequest:
    return ProviderRequest(model=case.model, system="be brief", messages=messages, tools=TOOLS, stream=case.stream)


async def play(case: Case, srv: ScriptedServer, client: httpx.AsyncClient) -> tuple[ProviderResponse, Shown]:
    srv.push(replay(CORPUS / case.file))
    shown = Shown()
    response = await provider(case, srv, client).complete(request(case, [{"role": "user", "content": "go"}]),
                                                          shown.sink())
    return response, shown


@pytest.mark.parametrize("case", CASES, ids=[c.file for c in CASES])
async def test_a_recorded_stream_gives_the_answer_the_thoughts_and_the_calls(case: Case, srv: ScriptedServer) -> None:
    async with httpx.AsyncClient() as client:
        response, shown = await play(case, srv, client)
    msg = response.message
    content = msg.get("content")
    if case.answer is not None:
        assert content == case.answer
    if case.answer_has:
        assert isinstance(content, str) and case.answer_has in content
    if case.answer is None and not case.answer_has:
        assert not content
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in msg.get("tool_calls") or []]
    assert calls == case.calls
    assert response.finish_reason == case.finish
    thoughts = shown.joined("thought") if case.stream else str(msg.get("reasoning") or "")
    if case.thoughts_has:
        assert case.thoughts_has in thoughts
        assert case.thoughts_has in str(msg.get("reasoning"))
        assert case.thoughts_has not in (content or "")  # never mixed into the answer
    elif case.wire != "anthropic" or "redacted" not in case.file:
        assert "thought" not in {k for k, _ in shown.log} or case.wire == "anthropic"
    if case.stream:
        assert shown.joined("text") == (content or "")  # the answer shown is the answer kept, once
        assert shown.joined("thought").replace("\n\n", "") == str(msg.get("reasoning") or "").replace("\n\n", "")


def _next_messages(msg: Message) -> list[Message]:
    out: list[Message] = [{"role": "user", "content": "go"}, msg]
    for c in msg.get("tool_calls") or []:
        out.append({"role": "tool", "tool_call_id": c["id"], "content": "sunny"})
    if not msg.get("tool_calls"):
        out.append({"role": "user", "content": "and then?"})
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.file for c in CASES])
async def test_the_next_request_is_one_the_provider_accepts(case: Case, srv: ScriptedServer) -> None:
    async with httpx.AsyncClient() as client:
        response, _ = await play(case, srv, client)
        srv.push(text("done"))
        follow = ProviderRequest(model=case.model, system="be brief", messages=_next_messages(response.message),
                                 tools=TOOLS, stream=case.stream)
        second = await provider(case, srv, client).complete(follow)
    assert srv.requests[-1].rejected is None
    assert second.message["content"] == "done"


def wire_assistant(body: dict[str, Any]) -> Any:
    return next(m for m in body["messages"] if m.get("role") == "assistant")


async def test_deepseek_gets_its_reasoning_content_back_exactly_as_the_real_api_accepted_it(srv: ScriptedServer) -> None:
    case = CASES[4]
    recorded = json.loads((CORPUS / "deepseek/reasoning-tool-call.next-request.json").read_text())
    async with httpx.AsyncClient() as client:
        response, _ = await play(case, srv, client)
        srv.push(text("done"))
        await provider(case, srv, client).complete(request(case, _next_messages(response.message)))
    sent = wire_assistant(srv.requests[-1].body)
    real = wire_assistant(recorded)
    assert sent["reasoning_content"] == real["reasoning_content"]
    assert sent["content"] == real["content"]
    assert [c["function"] for c in sent["tool_calls"]] == [c["function"] for c in real["tool_calls"]]


async def test_anthropic_gets_its_thinking_block_back_as_the_real_api_accepted_it(srv: ScriptedServer) -> None:
    case = next(c for c in CASES if c.file == "anthropic/thinking-tool-use.response.json")
    recorded = json.loads((CORPUS / "anthropic/thinking-tool-use.next-request.json").read_text())
    async with httpx.AsyncClient() as client:
        response, _ = await play(case, srv, client)
        srv.push(text("done"))
        await provider(case, srv, client).complete(request(case, _next_messages(response.message)))
    sent = wire_assistant(srv.requests[-1].body)["content"]
    real = wire_assistant(recorded)["content"]
    assert sent == real  # thinking with its signature, then the text, then the tool_use


async def test_a_merged_or_dropped_thinking_block_is_refused_as_the_real_api_would(srv: ScriptedServer) -> None:
    case = next(c for c in CASES if c.file == "anthropic/thinking-tool-use.response.json")
    async with httpx.AsyncClient() as client:
        response, _ = await play(case, srv, client)
        msg = dict(response.message)
        blocks = msg["provider_data"]["blocks"]
        msg["provider_data"] = {"wire": "anthropic",
                                "blocks": [{**blocks[0], "thinking": blocks[0]["thinking"] + " more"}, *blocks[1:]]}
        with pytest.raises(ProviderError) as info:
            await provider(case, srv, client).complete(request(case, _next_messages(msg)))  # type: ignore[arg-type]
    assert info.value.status == 400 and "signature" in str(info.value)


async def test_reasoning_content_never_reaches_another_endpoint(srv: ScriptedServer) -> None:
    case = CASES[3]
    async with httpx.AsyncClient() as client, ScriptedServer() as mistral:  # a fallback on another endpoint
        response, _ = await play(case, srv, client)
        mistral.push(text("done"))
        other = OpenAIProvider(base_url=mistral.openai_url, api_key="k", client=client)
        await other.complete(ProviderRequest(model="mistral-small-latest", system="",
                                             messages=_next_messages(response.message), tools=TOOLS))
    assert mistral.requests[-1].rejected is None  # Mistral refuses reasoning_content ("Extra inputs")
    assert "reasoning_content" not in wire_assistant(mistral.requests[-1].body)


async def test_responses_sends_reasoning_items_back_stateless(srv: ScriptedServer) -> None:
    case = next(c for c in CASES if c.file == "responses/reasoning-function-call.sse")
    async with httpx.AsyncClient() as client:
        response, _ = await play(case, srv, client)
        srv.push(text("done"))
        await provider(case, srv, client).complete(request(case, _next_messages(response.message)))
    body = srv.requests[-1].body
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    kinds = [i.get("type", "message") for i in body["input"]]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
    assert body["input"][1]["encrypted_content"].startswith("gAAAAAB")
    assert "id" not in body["input"][2]


async def test_a_responses_error_event_is_classified(srv: ScriptedServer) -> None:
    case = Case("responses/error-insufficient-quota.chunks.txt", "responses")
    with pytest.raises(ProviderError) as info:
        async with httpx.AsyncClient() as client:
            await play(case, srv, client)
    assert info.value.category == "billing"
