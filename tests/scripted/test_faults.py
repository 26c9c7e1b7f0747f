"""Fault injection: HTTP errors, resets, stalls, broken streams and bodies, timing."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from agentls.agent.scripted import (
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
    truncated,
)

from .helpers import ANTHROPIC_HEADERS, Api, parse_sse

WIRES = ["openai", "anthropic"]


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True])
async def test_rate_limit_with_retry_after(api: Api, wire: str, stream: bool) -> None:
    api.srv.push(error(429, "slow down", retry_after=2, headers={"x-ratelimit-remaining-requests": "0"}))
    r = await api.post(wire, api.body(wire, stream=stream))
    assert r.status_code == 429
    assert r.headers["retry-after"] == "2" and r.headers["x-ratelimit-remaining-requests"] == "0"
    assert r.headers["content-type"] == "application/json"
    if wire == "openai":
        assert r.json() == {"error": {"message": "slow down", "type": "rate_limit_error", "param": None,
                                      "code": "rate_limit_exceeded"}}
    else:
        assert r.json() == {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}


async def test_anthropic_overloaded_and_fractional_retry_after(api: Api) -> None:
    api.srv.push(error(529, retry_after=0.5))
    r = await api.post("anthropic", api.anthropic_body())
    assert r.status_code == 529 and r.headers["retry-after"] == "0.5"
    assert r.json()["error"]["type"] == "overloaded_error"
    assert "529" in r.json()["error"]["message"]


@pytest.mark.parametrize(("status", "openai_type", "anthropic_type"), [
    (400, "invalid_request_error", "invalid_request_error"), (401, "invalid_request_error", "authentication_error"),
    (402, "insufficient_quota", "billing_error"), (404, "invalid_request_error", "not_found_error"),
    (413, "invalid_request_error", "request_too_large"), (500, "server_error", "api_error"),
    (503, "server_error", "api_error")])
async def test_default_error_types(api: Api, status: int, openai_type: str, anthropic_type: str) -> None:
    api.srv.push(error(status), error(status))
    assert (await api.post("openai", api.openai_body())).json()["error"]["type"] == openai_type
    r = await api.post("anthropic", api.anthropic_body())
    assert r.status_code == status and r.json()["error"]["type"] == anthropic_type


async def test_error_type_and_code_overrides(api: Api) -> None:
    api.srv.push(error(400, "This model's maximum context length is 8192 tokens", type="invalid_request_error",
                       error_code="context_length_exceeded"))
    body = (await api.post("openai", api.openai_body())).json()["error"]
    assert body["code"] == "context_length_exceeded" and "maximum context length" in body["message"]


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True])
async def test_reset_before_any_byte(api: Api, wire: str, stream: bool) -> None:
    api.srv.push(reset("before"), text("after the reset"))
    with pytest.raises(httpx.ReadError):
        await api.post(wire, api.body(wire, stream=stream))
    assert (await api.complete(wire, stream=stream))["content"] == "after the reset"


@pytest.mark.parametrize("wire", WIRES)
async def test_reset_during_stream(api: Api, wire: str) -> None:
    api.srv.push(reset("during", content="one two three four five six seven eight"))
    got: list[str] = []
    with pytest.raises(httpx.ReadError):
        async with api.client.stream("POST", _target(api, wire), json=api.body(wire, stream=True),
                                     headers=ANTHROPIC_HEADERS) as r:
            assert r.status_code == 200
            async for line in r.aiter_lines():
                got.append(line)
    assert any(line.startswith("data:") for line in got)  # a few chunks came before the abort


async def test_reset_during_plain_body(api: Api) -> None:
    api.srv.push(reset("during"))
    with pytest.raises(httpx.ReadError):
        await api.post("openai", api.openai_body())


@pytest.mark.parametrize("stream", [False, True])
async def test_stall_beyond_read_timeout(api: Api, stream: bool) -> None:
    api.srv.push(stall(5))
    t0 = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        if stream:
            async with api.client.stream("POST", _target(api, "openai"), json=api.openai_body(stream=True),
                                         timeout=httpx.Timeout(5, read=0.2)) as r:
                async for _ in r.aiter_lines():
                    pass
        else:
            await api.post("openai", api.openai_body(), timeout=httpx.Timeout(5, read=0.2))
    assert time.monotonic() - t0 < 2
    await _eventually(lambda: api.srv.requests[-1].client_disconnected)


async def test_stall_shorter_than_timeout_delivers(api: Api) -> None:
    api.srv.push(stall(0.1, content="late"), stall(0.1, content="late"))
    t0 = time.monotonic()
    assert (await api.complete("anthropic", stream=True))["content"] == "late"
    assert (await api.complete("openai", stream=False))["content"] == "late"
    assert time.monotonic() - t0 >= 0.2


@pytest.mark.parametrize("wire", WIRES)
async def test_malformed_sse(api: Api, wire: str) -> None:
    api.srv.push(malformed_sse())
    r = await api.post(wire, api.body(wire, stream=True))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    datas = [d for _, d in parse_sse(r.text)]
    assert "{broken" in datas
    bad = 0
    for d in datas:
        try:
            json.loads(d)
        except ValueError:
            bad += 1
    assert bad >= 2


@pytest.mark.parametrize("wire", WIRES)
async def test_invalid_json(api: Api, wire: str) -> None:
    api.srv.push(invalid_json(), invalid_json())
    r = await api.post(wire, api.body(wire))
    assert r.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        r.json()
    r = await api.post(wire, api.body(wire, stream=True))
    assert r.status_code == 200
    datas = [d for _, d in parse_sse(r.text)]
    assert datas
    for d in datas:
        with pytest.raises(json.JSONDecodeError):
            json.loads(d)


async def test_cut_stream_mid_tool_call_openai(api: Api) -> None:
    api.srv.push(cut_stream(3, tools(call("write_file", {"path": "a.txt", "content": "x" * 40}))))
    r = await api.post("openai", api.openai_body(stream=True))  # the body ends cleanly: no transport error
    frames = parse_sse(r.text)
    assert len(frames) == 3 and (None, "[DONE]") not in frames
    chunks = [json.loads(d) for _, d in frames]
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks)
    args = "".join(c["choices"][0]["delta"]["tool_calls"][0]["function"].get("arguments", "")
                   for c in chunks if "tool_calls" in c["choices"][0]["delta"])
    with pytest.raises(json.JSONDecodeError):
        json.loads(args)
    assert r.headers["connection"] == "close"


async def test_cut_stream_anthropic_has_no_message_stop(api: Api) -> None:
    api.srv.push(cut_stream(5, tools(call("read_file", {"path": "abcdefgh.txt"}))))
    r = await api.post("anthropic", api.anthropic_body(stream=True))
    names = [n for n, _ in parse_sse(r.text)]
    assert len(names) == 5 and "message_stop" not in names and "message_delta" not in names


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True])
async def test_truncated_tool_calls(api: Api, wire: str, stream: bool) -> None:
    api.srv.push(truncated(call("write_file", {"path": "big.txt", "content": "lorem ipsum " * 10})))
    got = await api.complete(wire, stream=stream) if not (wire == "anthropic" and stream) else None
    if got is None:  # the streamed partial_json cannot be parsed: reassemble by hand
        r = await api.post(wire, api.body(wire, stream=True))
        partial = "".join(json.loads(d)["delta"].get("partial_json", "") for n, d in parse_sse(r.text)
                          if n == "content_block_delta")
        stop = [json.loads(d)["delta"]["stop_reason"] for n, d in parse_sse(r.text) if n == "message_delta"]
        assert stop == ["max_tokens"]
        with pytest.raises(json.JSONDecodeError):
            json.loads(partial)
        return
    assert got["finish"] == ("length" if wire == "openai" else "max_tokens")
    (name, args), = got["tool_calls"]
    assert name == "write_file"
    if wire == "openai":
        with pytest.raises(json.JSONDecodeError):
            json.loads(args)
    else:
        assert isinstance(args, str) and args.startswith('{"path": "big.txt"')  # raw string when not parseable


async def test_latency_and_chunk_delay(api: Api) -> None:
    api.srv.push(text("a", latency=0.15), text("one two three four five", chunk_delay=0.03))
    t0 = time.monotonic()
    await api.post("openai", api.openai_body())
    assert time.monotonic() - t0 >= 0.15
    arrivals: list[float] = []
    async with api.client.stream("POST", _target(api, "anthropic"), json=api.anthropic_body(stream=True),
                                 headers=ANTHROPIC_HEADERS) as r:
        async for line in r.aiter_lines():
            if line.startswith("data:"):
                arrivals.append(time.monotonic())
    assert arrivals[-1] - arrivals[0] >= 0.03 * (len(arrivals) - 1) * 0.9


async def test_client_disconnect_during_latency_is_noticed(api: Api) -> None:
    api.srv.push(text("never seen", latency=3), text("next"))
    with pytest.raises(httpx.ReadTimeout):
        await api.post("openai", api.openai_body(), timeout=httpx.Timeout(5, read=0.1))
    await _eventually(lambda: api.srv.requests[-1].client_disconnected)
    assert (await api.complete("openai", stream=False))["content"] == "next"


async def test_stop_does_not_wait_for_stalled_responses() -> None:
    srv = await ScriptedServer().start()
    srv.push(stall(30), text("x", latency=30))
    async with httpx.AsyncClient(timeout=10) as client:
        url = srv.openai_url + "/chat/completions"
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        tasks = [asyncio.create_task(client.post(url, json=body)) for _ in range(2)]
        await _eventually(lambda: len(srv.requests) == 2)
        t0 = time.monotonic()
        await srv.stop()
        assert time.monotonic() - t0 < 1
        results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, httpx.HTTPError) for r in results)


def _target(api: Api, wire: str) -> str:
    if wire == "openai":
        return api.srv.openai_url + "/chat/completions"
    return api.srv.anthropic_url + "/v1/messages"


async def _eventually(cond: object, timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.01)
