"""Queues, responders, recording, thread mode, control endpoints, HTTP details and concurrency."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import httpx
import pytest

from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, text, tools

from .helpers import ANTHROPIC_HEADERS, Api, parse_sse


async def test_constructing_opens_nothing() -> None:
    srv = ScriptedServer(port=0)
    with pytest.raises(RuntimeError, match="not started"):
        _ = srv.base_url
    await srv.start()
    assert srv.base_url.startswith("http://127.0.0.1:") and srv.openai_url == srv.base_url + "/v1"
    assert srv.anthropic_url == srv.base_url
    await srv.stop()
    await srv.stop()  # idempotent


async def test_fifo_shared_and_per_model_queues(api: Api) -> None:
    api.srv.push(text("shared 1"), text("shared 2"))
    api.srv.push(text("a 1"), model="a")
    api.srv.push(text("b 1"), model="b")
    got = [(await api.complete("openai", False, model=m))["content"] for m in ("a", "a", "b", "b")]
    assert got == ["a 1", "shared 1", "b 1", "shared 2"]
    assert (await api.post("openai", api.openai_body(model="a"))).status_code == 500
    assert [r.model for r in api.srv.requests] == ["a", "a", "b", "b", "a"]


async def test_no_reply_is_a_clear_500(api: Api) -> None:
    for wire in ("openai", "anthropic"):
        r = await api.post(wire, api.body(wire, model="gpt-test"))
        assert r.status_code == 500
        message = r.json()["error"]["message"]
        assert message == "scripted provider: no reply queued for model 'gpt-test'"


async def test_responders_sync_async_per_model_and_queue_priority(api: Api) -> None:
    seen: list[str] = []

    def shared(req: RecordedRequest) -> Reply:
        seen.append(req.model)
        return text(f"shared for {req.model}")

    async def special(req: RecordedRequest) -> Reply:
        await asyncio.sleep(0)
        return text(f"special: {req.last_user_text}")

    api.srv.set_responder(shared)
    api.srv.set_responder(special, model="x")
    api.srv.push(text("queued first"))
    assert (await api.complete("openai", False, model="x"))["content"] == "queued first"
    assert (await api.complete("openai", False, model="x"))["content"] == "special: hi"
    assert (await api.complete("anthropic", True, model="y"))["content"] == "shared for y"
    assert seen == ["y"]
    api.srv.set_responder(None, model="x")
    assert (await api.complete("openai", False, model="x"))["content"] == "shared for x"


async def test_responder_errors_become_500(api: Api) -> None:
    def broken(req: RecordedRequest) -> Reply:
        raise KeyError("boom")

    api.srv.set_responder(broken)
    r = await api.post("openai", api.openai_body())
    assert r.status_code == 500 and "responder raised KeyError" in r.json()["error"]["message"]
    api.srv.set_responder(lambda req: "not a reply")  # type: ignore[arg-type,return-value]
    r = await api.post("openai", api.openai_body())
    assert r.status_code == 500 and "not a Reply" in r.json()["error"]["message"]


def test_push_rejects_non_replies() -> None:
    with pytest.raises(TypeError, match="push\\(\\) takes Reply objects"):
        ScriptedServer().push(call("read_file", {}))  # type: ignore[arg-type]


async def test_recorded_request_fields_openai(api: Api) -> None:
    api.srv.push(text("ok"))
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "first"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "file text"}]
    tool_schemas = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
                    for n in ("read_file", "list_dir")]
    t0 = time.monotonic()
    await api.post("openai", api.openai_body(messages, tools=tool_schemas, stream=True),
                   headers={"Authorization": "Bearer k"})
    rec = api.srv.requests[-1]
    assert (rec.path, rec.wire, rec.model, rec.stream) == ("/v1/chat/completions", "openai", "m", True)
    assert rec.headers["authorization"] == "Bearer k" and t0 <= rec.received_at <= time.monotonic()
    assert rec.system == "be brief" and rec.tools == ["read_file", "list_dir"] and rec.last_user_text == "first"
    assert rec.messages == messages and rec.rejected is None and not rec.client_disconnected


async def test_recorded_request_fields_anthropic(api: Api) -> None:
    api.srv.push(text("ok"))
    messages = [{"role": "user", "content": [{"type": "text", "text": "look"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]}]
    await api.post("anthropic", api.anthropic_body(
        messages, system=[{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        tools=[{"name": "f", "input_schema": {"type": "object"}}]))
    rec = api.srv.requests[-1]
    assert rec.wire == "anthropic" and rec.system == "one\ntwo" and rec.tools == ["f"]
    assert rec.last_user_text == "look" and rec.headers["anthropic-version"] == "2023-06-01"


async def test_clear_drops_everything(api: Api) -> None:
    api.srv.push(text("a"))
    api.srv.set_responder(lambda r: text("b"))
    await api.post("openai", api.openai_body())
    api.srv.push(text("c"), model="m")
    api.srv.clear()
    assert api.srv.requests == []
    assert (await api.post("openai", api.openai_body())).status_code == 500


def test_run_in_thread_with_a_sync_client() -> None:
    with ScriptedServer.run_in_thread() as srv:
        srv.push(text("from a thread"), tools(call("list_dir", {})))
        with httpx.Client(timeout=5) as c:
            url = srv.openai_url + "/chat/completions"
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            assert c.post(url, json=body).json()["choices"][0]["message"]["content"] == "from a thread"
            r = c.post(url, json={**body, "stream": True})
            assert parse_sse(r.text)[-1] == (None, "[DONE]")
        assert len(srv.requests) == 2
        url = srv.openai_url + "/chat/completions"
    with pytest.raises(httpx.ConnectError):
        httpx.post(url, json=body, timeout=2)


async def test_control_endpoints(api: Api) -> None:
    c, base = api.client, api.srv.base_url
    r = await c.post(base + "/_scripted/push", json={"model": "m", "replies": [
        {"content": "scripted via http"},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a"}, "id": "x1"}]},
        {"status": 429, "retry_after": 1}]})
    assert r.json() == {"queued": 3}
    assert (await api.complete("openai", False))["content"] == "scripted via http"
    assert (await api.complete("anthropic", True))["tool_calls"] == [("read_file", {"path": "a"})]
    assert (await api.post("openai", api.openai_body())).headers["retry-after"] == "1"
    assert (await c.post(base + "/_scripted/responder", json={"name": "bench"})).json() == {"ok": True}
    assert (await api.complete("openai", False, model="bench:0"))["content"] == "done"
    recorded = (await c.get(base + "/_scripted/requests")).json()["requests"]
    assert [r["wire"] for r in recorded] == ["openai", "anthropic", "openai", "openai"]
    assert recorded[0]["body"]["messages"][0]["content"] == "hi" and recorded[0]["rejected"] is None
    assert (await c.post(base + "/_scripted/clear")).json() == {"ok": True}
    assert (await c.get(base + "/_scripted/requests")).json() == {"requests": []}
    assert (await api.post("openai", api.openai_body())).status_code == 500  # responder cleared too


@pytest.mark.parametrize("body", [
    {"replies": [{"nope": 1}]}, {"replies": "x"}, {"replies": [{"tool_calls": [{"arguments": {}}]}]},
    {"name": "nonexistent"}, [1]])
async def test_control_endpoint_errors(api: Api, body: Any) -> None:
    path = "/_scripted/responder" if isinstance(body, dict) and "name" in body else "/_scripted/push"
    r = await api.client.post(api.srv.base_url + path, json=body)
    assert r.status_code == 400 and r.json()["error"]["message"]


async def test_keep_alive_reuses_one_connection(api: Api) -> None:
    for _ in range(5):
        api.srv.push(text("k"))
    for _ in range(5):
        await api.post("openai", api.openai_body(stream=True))
    pool = api.client._transport._pool  # type: ignore[attr-defined]
    assert len(pool.connections) == 1


async def test_raw_socket_chunked_request_and_expect_continue(srv: ScriptedServer) -> None:
    srv.push(text("raw ok"))
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    half = len(body) // 2
    reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
    writer.write(b"POST /v1/chat/completions?api-version=1 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                 b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    writer.write(b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (half, body[:half], len(body) - half, body[half:]))
    data = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    assert data.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")
    assert b"connection: close" in data and b'"raw ok"' in data


async def test_garbage_request_line_gets_400(srv: ScriptedServer) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
    writer.write(b"HELLO\r\n\r\n")
    data = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    assert data.startswith(b"HTTP/1.1 400 ")


async def test_abrupt_client_disconnects_do_not_hurt_the_server(srv: ScriptedServer) -> None:
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 1000\r\n\r\n{\"model\"")
        s.close()
    srv.push(text("still alive"))
    async with httpx.AsyncClient() as c:
        r = await c.post(srv.openai_url + "/chat/completions",
                         json={"model": "m", "messages": [{"role": "user", "content": "x"}]})
    assert r.json()["choices"][0]["message"]["content"] == "still alive"


async def test_fifty_concurrent_streams(srv: ScriptedServer) -> None:
    srv.set_responder(lambda req: tools(call("read_file", {"path": req.last_user_text or ""}),
                                        content="reading " + (req.last_user_text or "")))
    limits = httpx.Limits(max_connections=100)
    async with httpx.AsyncClient(limits=limits, timeout=10) as c:
        async def one(i: int) -> str:
            wire = "openai" if i % 2 else "anthropic"
            body: dict[str, Any] = {"model": "m", "stream": True, "messages": [{"role": "user", "content": f"f{i}"}]}
            if wire == "openai":
                r = await c.post(srv.openai_url + "/chat/completions", json=body)
                deltas = [json.loads(d)["choices"][0]["delta"] for _, d in parse_sse(r.text)[:-1]]
                return "".join(d.get("content") or "" for d in deltas)
            r = await c.post(srv.anthropic_url + "/v1/messages", json={**body, "max_tokens": 10},
                             headers=ANTHROPIC_HEADERS)
            return "".join(json.loads(d)["delta"].get("text", "") for n, d in parse_sse(r.text)
                           if n == "content_block_delta")

        got = await asyncio.gather(*(one(i) for i in range(50)))
    assert got == [f"reading f{i}" for i in range(50)]
    assert len(srv.requests) == 50


async def test_throughput_is_printed(srv: ScriptedServer, capsys: pytest.CaptureFixture[str]) -> None:
    """Not asserted: prints the server's cost per request (raw sockets) and the cost with httpx clients."""
    srv.set_responder(lambda req: text("a short answer with a few words"))
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 2000}], "stream": True}
    raw = json.dumps(body).encode()
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(raw), raw)

    async def raw_worker(n: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        for _ in range(n):
            writer.write(request)
            await reader.readuntil(b"data: [DONE]\n\n\r\n0\r\n\r\n")
        writer.close()

    async def httpx_worker(n: int) -> None:
        async with httpx.AsyncClient() as c:  # one keep-alive client per session, as the agent does
            for _ in range(n):
                await c.post(srv.openai_url + "/chat/completions", json=body)

    timings = []
    for worker in (raw_worker, httpx_worker):
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(20) for _ in range(50)))
        timings.append(time.perf_counter() - t0)
    with capsys.disabled():
        print(f"\n[scripted] 50 sessions x 20 streamed requests: raw sockets {timings[0]:.2f}s "
              f"({timings[0] * 1000:.0f} us/request, server + minimal client), "
              f"httpx {timings[1]:.2f}s ({timings[1] * 1000:.0f} us/request)")
    assert len(srv.requests) == 2000
