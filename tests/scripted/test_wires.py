"""Both wire formats, streaming and not: the reassembled stream equals the complete answer."""

from __future__ import annotations

import json

import pytest

from agentls.agent.scripted import Reply, call, empty, text, tools

from .helpers import Api, parse_sse

WIRES = ["openai", "anthropic"]

CASES: dict[str, Reply] = {
    "text": text("Hello there, this is a scripted answer.\nSecond line."),
    "reasoning": text("The answer is 4.", reasoning="2 + 2 is 4, let me say so."),
    "tools": tools(call("read_file", {"path": "a.py", "offset": 3}), call("list_dir", {}),
                   call("search_files", {"pattern": "def \\w+", "glob": "*.py"}), content="Let me look."),
    "reasoning+tools": tools(call("terminal", {"command": "ls -la"}), reasoning="I should run ls."),
    "unicode": text("héllo — 世界 ✓"),
}


def _expected(reply: Reply, wire: str) -> dict[str, object]:
    calls = [(c.name, c.arguments_json() if wire == "openai" else c.arguments) for c in reply.tool_calls]
    finish = reply.finish if wire == "openai" else {"stop": "end_turn", "tool_calls": "tool_use"}[reply.finish]
    return {"content": reply.content or "", "reasoning": reply.reasoning or "", "tool_calls": calls,
            "finish": finish}


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("case", sorted(CASES))
async def test_stream_reassembles_to_the_complete_answer(api: Api, wire: str, case: str) -> None:
    reply = CASES[case]
    api.srv.push(reply, reply)
    whole = await api.complete(wire, stream=False)
    streamed = await api.complete(wire, stream=True)
    keys = ("content", "reasoning", "tool_calls", "finish")
    assert {k: whole[k] for k in keys} == _expected(reply, wire)
    assert {k: streamed[k] for k in keys} == {k: whole[k] for k in keys}
    assert len(set(whole["ids"] + streamed["ids"])) == 2 * len(reply.tool_calls)  # unique per server


async def test_openai_stream_chunk_shapes(api: Api) -> None:
    api.srv.push(tools(call("read_file", {"path": "some/long/path/name.py"}), content="ok"))
    r = await api.post("openai", api.openai_body(stream=True, stream_options={"include_usage": True}))
    events = [json.loads(d) for _, d in parse_sse(r.text)[:-1]]
    assert parse_sse(r.text)[-1] == (None, "[DONE]")
    assert events[0]["choices"][0]["delta"]["role"] == "assistant"
    call_deltas = [e["choices"][0]["delta"]["tool_calls"][0] for e in events
                   if e["choices"] and "tool_calls" in e["choices"][0]["delta"]]
    first, fragments = call_deltas[0], call_deltas[1:]
    assert first == {"index": 0, "id": first["id"], "type": "function",
                     "function": {"name": "read_file", "arguments": ""}}
    assert first["id"].startswith("call_")
    assert 2 <= len(fragments) <= 3 and all(set(f) == {"index", "function"} for f in fragments)
    final, usage = events[-2], events[-1]
    assert final["choices"][0]["finish_reason"] == "tool_calls" and final["choices"][0]["delta"] == {}
    assert final["usage"] is None
    assert usage["choices"] == [] and usage["usage"]["prompt_tokens"] > 0
    assert set(usage["usage"]) >= {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details"}


async def test_openai_stream_has_no_usage_chunk_unless_asked(api: Api) -> None:
    api.srv.push(text("hi"))
    r = await api.post("openai", api.openai_body(stream=True))
    events = [json.loads(d) for _, d in parse_sse(r.text)[:-1]]
    assert all(e["choices"] and "usage" not in e for e in events)


async def test_openai_complete_object_shape(api: Api) -> None:
    api.srv.push(tools(call("write_file", {"path": "x", "content": "y"}, id="my_id")))
    body = (await api.post("openai", api.openai_body())).json()
    assert body["object"] == "chat.completion" and body["model"] == "m"
    msg = body["choices"][0]["message"]
    assert msg["role"] == "assistant" and msg["content"] is None
    assert msg["tool_calls"] == [{"id": "my_id", "type": "function",
                                  "function": {"name": "write_file", "arguments": '{"path": "x", "content": "y"}'}}]
    u = body["usage"]
    assert u["prompt_tokens_details"]["cached_tokens"] == 0
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]


async def test_anthropic_event_sequence(api: Api) -> None:
    api.srv.push(tools(call("list_dir", {"path": "."}), content="Looking.", reasoning="hmm"))
    r = await api.post("anthropic", api.anthropic_body(stream=True))
    names = [n for n, _ in parse_sse(r.text)]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    starts = [json.loads(d)["content_block"]["type"] for n, d in parse_sse(r.text) if n == "content_block_start"]
    assert starts == ["thinking", "text", "tool_use"]
    deltas = [json.loads(d)["delta"]["type"] for n, d in parse_sse(r.text) if n == "content_block_delta"]
    assert "signature_delta" in deltas and "input_json_delta" in deltas
    assert names.count("content_block_start") == names.count("content_block_stop") == 3
    start = json.loads(parse_sse(r.text)[0][1])["message"]
    assert start["usage"]["input_tokens"] > 0 and start["role"] == "assistant"


async def test_anthropic_complete_message_shape(api: Api) -> None:
    api.srv.push(text("fine", reasoning="thought", usage={"prompt_tokens": 100, "cached_tokens": 60,
                                                          "completion_tokens": 7}))
    body = (await api.post("anthropic", api.anthropic_body())).json()
    assert body["type"] == "message" and body["role"] == "assistant" and body["stop_reason"] == "end_turn"
    assert [b["type"] for b in body["content"]] == ["thinking", "text"]
    assert body["content"][0]["signature"]
    assert body["usage"] == {"input_tokens": 40, "output_tokens": 7, "cache_read_input_tokens": 60,
                             "cache_creation_input_tokens": 0}


async def test_usage_override_and_defaults(api: Api) -> None:
    api.srv.push(text("abcdefgh" * 10), text("x", usage={"input_tokens": 10, "cache_read_input_tokens": 5,
                                                          "output_tokens": 3}))
    body = api.openai_body()
    u = (await api.post("openai", body)).json()["usage"]
    assert u["prompt_tokens"] == len(api.srv.requests[-1].raw) // 4 > 0 and u["completion_tokens"] == 20
    u = (await api.post("openai", body)).json()["usage"]
    assert (u["prompt_tokens"], u["completion_tokens"], u["prompt_tokens_details"]["cached_tokens"]) == (15, 3, 5)


@pytest.mark.parametrize("wire", WIRES)
async def test_length_finish_reason_maps(api: Api, wire: str) -> None:
    api.srv.push(text("cut", finish_reason="length"), text("cut", finish_reason="length"))
    expected = "length" if wire == "openai" else "max_tokens"
    assert (await api.complete(wire, stream=False))["finish"] == expected
    assert (await api.complete(wire, stream=True))["finish"] == expected


async def test_string_arguments_are_sent_verbatim(api: Api) -> None:
    broken = '{"path": "a.py", '
    api.srv.push(tools(call("read_file", broken)), tools(call("read_file", broken)), tools(call("read_file", broken)))
    assert (await api.complete("openai", stream=False))["tool_calls"] == [("read_file", broken)]
    assert (await api.complete("openai", stream=True))["tool_calls"] == [("read_file", broken)]
    r = await api.post("anthropic", api.anthropic_body(stream=True))
    partial = "".join(json.loads(d)["delta"]["partial_json"] for n, d in parse_sse(r.text)
                      if n == "content_block_delta")
    assert partial == broken


async def test_chunk_size_controls_text_deltas(api: Api) -> None:
    api.srv.push(text("abcdefghij", chunk_size=3), text("one two three"))
    r = await api.post("openai", api.openai_body(stream=True))
    pieces = [json.loads(d)["choices"][0]["delta"].get("content") for _, d in parse_sse(r.text)[1:-2]]
    assert pieces == ["abc", "def", "ghi", "j"]
    r = await api.post("openai", api.openai_body(stream=True))
    pieces = [json.loads(d)["choices"][0]["delta"].get("content") for _, d in parse_sse(r.text)[1:-2]]
    assert pieces == ["one ", "two ", "three"]


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True])
async def test_empty_reply(api: Api, wire: str, stream: bool) -> None:
    api.srv.push(empty())
    got = await api.complete(wire, stream=stream)
    assert got["content"] == "" and got["tool_calls"] == [] and got["reasoning"] == ""
    assert got["finish"] == ("stop" if wire == "openai" else "end_turn")


async def test_models_listing(api: Api) -> None:
    api.srv.push(text("a"), model="gpt-x")
    await api.post("openai", api.openai_body(model="gpt-x"))
    listed = (await api.client.get(api.srv.openai_url + "/models")).json()
    assert listed["object"] == "list"
    assert [m["id"] for m in listed["data"]] == ["gpt-x", "scripted"]
    anth = (await api.client.get(api.srv.base_url + "/v1/models", headers={"anthropic-version": "x"})).json()
    assert anth["data"][0]["type"] == "model" and anth["has_more"] is False


async def test_unknown_route_is_404_and_wrong_method_405(api: Api) -> None:
    r = await api.client.post(api.srv.base_url + "/v2/nothing", json={})
    assert r.status_code == 404 and "no route" in r.json()["error"]["message"]
    r = await api.client.get(api.srv.openai_url + "/chat/completions")
    assert r.status_code == 405
