"""docs/loop.md §4: classification, retries with backoff, compression on overflow, fallbacks, structured failure."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from agentls.agent.providers.errors import CATEGORIES, HINTS
from agentls.agent.scripted import (
    RecordedRequest,
    Reply,
    ScriptedServer,
    call,
    cut_stream,
    error,
    invalid_json,
    malformed_sse,
    reset,
    stall,
    text,
    tools,
)

from .conftest import AgentFactory
from .helpers import Updates, check, purpose, turn_requests


def _gaps(reqs: list[RecordedRequest]) -> list[float]:
    return [b.received_at - a.received_at for a, b in itertools.pairwise(reqs)]


def _failed(result: dict[str, Any], category: str) -> None:
    check(result)
    assert result.failed is True and result.exit_reason == "failed" and result.completed is False
    assert result.error["category"] == category, result.error
    assert isinstance(result.error["message"], str) and result.error["message"]


def test_every_category_carries_its_hints() -> None:
    assert set(CATEGORIES) == {"auth", "billing", "rate_limit", "overloaded", "server_error", "timeout",
                               "context_overflow", "payload_too_large", "model_not_found", "format_error",
                               "content_policy", "unknown"}
    assert set(HINTS) == set(CATEGORIES)
    for name in ("auth", "billing", "model_not_found"):
        assert HINTS[name].fallback and not HINTS[name].retryable
    for name in ("rate_limit", "overloaded", "server_error", "timeout"):
        assert HINTS[name].retryable
    assert HINTS["context_overflow"].compress and HINTS["payload_too_large"].compress


FALLBACK_CASES = [(401, "auth"), (402, "billing"), (403, "auth"), (404, "model_not_found")]


@pytest.mark.parametrize(("status", "category"), FALLBACK_CASES)
async def test_auth_billing_model_errors_go_to_the_fallback(make_agent: AgentFactory, srv: ScriptedServer,
                                                            wire: str, status: int, category: str) -> None:
    srv.push(error(status), model="m")
    srv.push(text("from the backup"), model="backup")
    result = check(await make_agent(wire, fallback_models=["backup"]).run_conversation("hi"))
    assert result.completed and result.final_response == "from the backup"
    assert [r.model for r in srv.requests] == ["m", "backup"]


@pytest.mark.parametrize(("status", "category"), FALLBACK_CASES)
async def test_empty_chain_fails_structurally(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                              stream: bool, status: int, category: str) -> None:
    srv.push(error(status, f"scripted {status}"))
    result = await make_agent(wire, stream).run_conversation("hi")
    _failed(result, category)
    assert result.final_response is None and len(srv.requests) == 1


async def test_fallback_chain_order(make_agent: AgentFactory, srv: ScriptedServer, stream: bool) -> None:
    srv.push(error(401), model="m")
    srv.push(error(404, "model not found"), model="b")
    srv.push(error(402), model="c")
    srv.push(tools(call("list_dir", {})), text("from d"), model="d")
    result = check(await make_agent(stream=stream, fallback_models=["b", "c", "d"]).run_conversation("hi"))
    assert result.final_response == "from d"
    assert [r.model for r in srv.requests] == ["m", "b", "c", "d", "d"]


async def test_fallback_chain_exhausted(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    srv.push(error(401), model="m")
    srv.push(error(401), model="b")
    result = await make_agent(fallback_models=["b"]).run_conversation("hi")
    _failed(result, "auth")
    assert [r.model for r in srv.requests] == ["m", "b"]


async def test_fallback_to_another_wire(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    srv.push(error(401), model="m")
    srv.push(tools(call("read_file", {"path": "README.md"})), text("claude here"), model="claude")
    backup = {"model": "claude", "provider": "anthropic", "base_url": srv.anthropic_url, "api_key": "k"}
    result = check(await make_agent("openai", fallback_models=[backup]).run_conversation("hi"))
    assert result.final_response == "claude here"
    assert [r.wire for r in srv.requests] == ["openai", "anthropic", "anthropic"]
    assert all(r.rejected is None for r in srv.requests)


async def test_rate_limit_backoff_bounds(make_agent: AgentFactory, srv: ScriptedServer, wire: str) -> None:
    """delay = min(base*2^(n-1), max) plus jitter in [0, delay/2]: with base 0.1 and max 0.15 the gaps are
    in [0.1, 0.15], then [0.15, 0.225] twice (plus a little overhead)."""
    srv.push(error(429), error(429), error(429), text("finally"))
    agent = make_agent(wire, retry_base_delay=0.1, retry_max_delay=0.15, max_retries=3)
    result = check(await agent.run_conversation("hi"))
    assert result.final_response == "finally" and len(srv.requests) == 4
    g1, g2, g3 = _gaps(srv.requests)
    assert 0.1 <= g1 <= 0.15 + 0.1, g1
    assert 0.15 <= g2 <= 0.225 + 0.1, g2
    assert 0.15 <= g3 <= 0.225 + 0.1, g3


async def test_retry_after_is_honoured(make_agent: AgentFactory, srv: ScriptedServer, wire: str) -> None:
    srv.push(error(429, "slow down", retry_after=0.4), text("ok"))
    result = check(await make_agent(wire, retry_base_delay=0.01, retry_max_delay=0.05).run_conversation("hi"))
    assert result.completed
    (gap,) = _gaps(srv.requests)
    assert 0.4 <= gap < 0.8, gap


async def test_rate_limit_retries_are_bounded(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    srv.set_responder(lambda req: error(429, "rate limit exceeded"))
    result = await make_agent(max_retries=2).run_conversation("hi")
    _failed(result, "rate_limit")
    assert len(srv.requests) == 3


@pytest.mark.parametrize("status", [500, 502, 503, 529])
async def test_server_errors_are_retried(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                         status: int) -> None:
    srv.push(error(status), error(status), text("recovered"))
    result = check(await make_agent(wire, retry_base_delay=0.02).run_conversation("hi"))
    assert result.final_response == "recovered" and len(srv.requests) == 3
    assert all(g >= 0.02 for g in _gaps(srv.requests))


TRANSIENT: dict[str, Reply] = {
    "reset before": reset("before"), "reset during": reset("during", content="half an answer that is cut"),
    "malformed sse": malformed_sse(), "invalid json": invalid_json(),
}


@pytest.mark.parametrize("fault", TRANSIENT)
async def test_broken_responses_are_retried(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                            stream: bool, fault: str) -> None:
    srv.push(TRANSIENT[fault], text("the real answer"))
    result = check(await make_agent(wire, stream).run_conversation("hi"))
    assert result.final_response == "the real answer" and len(srv.requests) == 2
    assert [m["content"] for m in result.messages if m["role"] == "assistant"] == ["the real answer"]


async def test_stall_past_the_read_timeout_is_retried(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                                      stream: bool) -> None:
    srv.push(stall(5.0), text("fresh answer"))
    result = check(await make_agent(wire, stream, request_timeout=0.3).run_conversation("hi"))
    assert result.final_response == "fresh answer"
    (gap,) = _gaps(srv.requests)
    assert 0.3 <= gap < 1.5


async def test_stalls_until_retries_run_out_fail_as_timeout(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    srv.push(stall(5.0), stall(5.0))
    result = await make_agent(request_timeout=0.2, max_retries=1).run_conversation("hi")
    _failed(result, "timeout")


async def test_stream_cut_mid_tool_call_never_runs_it(make_agent: AgentFactory, srv: ScriptedServer,
                                                      workspace: Any, wire: str) -> None:
    cut = cut_stream(4, tools(call("write_file", {"path": "cut.txt", "content": "x" * 300})))
    srv.push(cut, text("recovered"))
    result = check(await make_agent(wire, stream=True, approval="yolo").run_conversation("write"))
    assert not (workspace / "cut.txt").exists()
    assert result.final_response == "recovered" and len(srv.requests) == 2
    assert all("tool_calls" not in m for m in result.messages)


def _big_history(rounds: int = 8, size: int = 6000) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    for i in range(rounds):
        args = json.dumps({"path": f"f{i}.txt"})
        history += [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": args}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"file {i}: " + "data " * (size // 5)},
            {"role": "assistant", "content": f"answer {i}"}]
    return history


OVERFLOWS: dict[str, Reply] = {
    "413": error(413, "Request Entity Too Large"),
    "400 openai": error(400, "This model's maximum context length is 32000 tokens. However, your messages "
                             "resulted in 40000 tokens.", error_code="context_length_exceeded"),
    "400 anthropic": error(400, "prompt is too long: 240000 tokens > 200000 maximum"),
    # llama.cpp's server (the embedded model): a turn of the Exercism run ended "failed" on it, unrecognised
    "400 llama.cpp": error(400, "request (8951 tokens) exceeds the available context size (8192 tokens), try "
                                "increasing it", type="exceed_context_size_error"),
}


@pytest.mark.parametrize("overflow", OVERFLOWS)
async def test_context_overflow_compresses_then_retries(make_agent: AgentFactory, srv: ScriptedServer,
                                                        updates: Updates, wire: str, overflow: str) -> None:
    turn = [OVERFLOWS[overflow], text("answered after compression")]
    srv.set_responder(lambda req: text("SUMMARY of the session") if purpose(req) == "summary" else turn.pop(0))
    agent = make_agent(wire, context_window=32_000)
    result = check(await agent.run_conversation("and now?", conversation_history=_big_history()))
    assert result.final_response == "answered after compression"
    first, second = turn_requests(srv.requests)
    assert len(second.raw) < len(first.raw) * 0.8
    assert [u["status"] for u in updates.of("compaction_update")][-1] == "completed"
    assert second.last_user_text == "and now?"


async def test_overflow_that_compression_cannot_fix_ends(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    srv.set_responder(lambda req: text("S") if purpose(req) == "summary" else error(413, "Request too large"))
    result = await make_agent(max_retries=2).run_conversation("hi")
    check(result)
    assert result.failed and result.error["category"] in ("payload_too_large", "context_overflow")
    assert len(turn_requests(srv.requests)) <= 5


CLASSIFIED = [
    (error(401), "auth"), (error(402), "billing"), (error(429, "Too many requests"), "rate_limit"),
    (error(529), "overloaded"), (error(500), "server_error"), (error(504), "timeout"),
    (error(404, "The model `m` does not exist"), "model_not_found"),
    (error(400, "Your request was flagged by our content policy"), "content_policy"),
    (error(400, "messages.0.content: unexpected field 'foo'"), "format_error"),
    (error(413, "Request Entity Too Large"), "payload_too_large"),
    (error(400, "This model's maximum context length is 8192 tokens"), "context_overflow"),
]


@pytest.mark.parametrize(("reply", "category"), CLASSIFIED, ids=[c for _, c in CLASSIFIED])
async def test_failure_category_reaches_the_result(make_agent: AgentFactory, srv: ScriptedServer, wire: str,
                                                   reply: Reply, category: str) -> None:
    srv.set_responder(lambda req: text("S") if purpose(req) == "summary" else reply)
    result = await make_agent(wire, max_retries=0).run_conversation("hi")
    _failed(result, category)


@pytest.mark.parametrize("category", ["auth", "billing", "model_not_found", "content_policy", "format_error"])
async def test_permanent_errors_are_not_retried(make_agent: AgentFactory, srv: ScriptedServer,
                                                category: str) -> None:
    reply = {c: r for r, c in CLASSIFIED}[category]
    srv.set_responder(lambda req: reply)
    result = await make_agent(max_retries=3).run_conversation("hi")
    _failed(result, category)
    assert len(srv.requests) == 1


async def test_optimizing_guards_never_break_the_loop(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    junk = {"x-ratelimit-remaining-requests": "-1", "x-ratelimit-reset-requests": "whenever",
            "x-ratelimit-remaining-tokens": "NaN", "x-ratelimit-limit-tokens": "0", "retry-after": "soon",
            "anthropic-ratelimit-requests-remaining": "0"}
    srv.push(tools(call("list_dir", {}), headers=junk), text("one", headers=junk), text("two", headers=junk))
    agent = make_agent()
    assert check(await agent.run_conversation("first")).final_response == "one"
    assert check(await agent.run_conversation("second")).final_response == "two"


async def test_failure_after_a_tool_round_keeps_a_valid_transcript(make_agent: AgentFactory, srv: ScriptedServer,
                                                                   wire: str, stream: bool) -> None:
    srv.push(tools(call("read_file", {"path": "README.md"}), call("list_dir", {})), error(401, "key revoked"))
    agent = make_agent(wire, stream)
    result = await agent.run_conversation("go")
    _failed(result, "auth")
    assert [m["role"] for m in result.messages][-3:] == ["assistant", "tool", "tool"]
    srv.push(text("back again"))
    assert check(await agent.run_conversation("retry")).final_response == "back again"
    assert srv.requests[-1].rejected is None
