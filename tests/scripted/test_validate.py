"""Strict validation: what the real APIs reject comes back as a precise 400 in the vendor's shape."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentls.agent.scripted import ScriptedServer, text
from agentls.agent.scripted.validate import validate_anthropic, validate_openai

from .helpers import Api

H = {"anthropic-version": "2023-06-01"}
TOOL = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}


def oa_call(cid: str, name: str = "read_file") -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}


def oa(*messages: dict[str, Any], **extra: Any) -> str | None:
    return validate_openai({"model": "m", "messages": list(messages), **extra})


def an(*messages: dict[str, Any], **extra: Any) -> str | None:
    return validate_anthropic({"model": "m", "max_tokens": 100, "messages": list(messages), **extra}, H)


U = {"role": "user", "content": "hi"}
A_CALLS = {"role": "assistant", "content": None, "tool_calls": [oa_call("c1"), oa_call("c2")]}


def tool(cid: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": "result"}


# ------------------------------------------------------------------ OpenAI
def test_openai_accepts_a_valid_tool_round_and_a_steer() -> None:
    assert oa({"role": "system", "content": "sys"}, U, A_CALLS, tool("c1"), tool("c2"),
              {"role": "user", "content": "steer"}, {"role": "assistant", "content": "done"}, U,
              tools=[TOOL], tool_choice="auto") is None
    assert oa(U, {"role": "assistant", "content": "", "tool_calls": [oa_call("x")]}, tool("x")) is None


@pytest.mark.parametrize(("messages", "needle"), [
    ([], "'messages' must be a non-empty array"),
    ([{"role": "robot", "content": "x"}], "invalid role 'robot'"),
    ([U, tool("c1")], "messages[1]: messages with role 'tool' must be a response"),
    ([U, A_CALLS, tool("c1")], "did not have response messages: c2"),
    ([U, A_CALLS, tool("c1"), U], "messages[1]: an assistant message with 'tool_calls' must be followed"),
    ([U, A_CALLS, tool("c1"), tool("c1"), tool("c2")], "messages[3]: duplicate tool message for tool_call_id 'c1'"),
    ([U, A_CALLS, tool("c3")], "tool_call_id 'c3' does not answer any tool call of the preceding assistant"),
    ([U, A_CALLS, tool("c1"), tool("c2"), tool("c1")], "duplicate tool message"),
    ([U, A_CALLS, tool("c1"), tool("c2"), {"role": "assistant", "content": "a"}, tool("c1")],
     "messages[5]: messages with role 'tool' must be a response"),
    ([U, {"role": "assistant", "content": None}], "needs 'content' unless it has 'tool_calls'"),
    ([U, {"role": "assistant", "content": "x", "tool_calls": []}], "'tool_calls' must be a non-empty array"),
    ([U, {"role": "assistant", "tool_calls": [{"id": "a", "type": "function",
                                               "function": {"name": "f", "arguments": {}}}]}],
     "must be a JSON-encoded string, got dict"),
    ([U, {"role": "assistant", "content": "x", "reasoning": "leaked"}], "Additional properties are not allowed"),
    ([{"role": "user", "content": 5}], "must be a string or an array of content parts"),
    ([U, {"role": "assistant", "content": None, "tool_calls": [oa_call("d"), oa_call("d")]}],
     "duplicate tool call id 'd'"),
])
def test_openai_rejections(messages: list[dict[str, Any]], needle: str) -> None:
    err = oa(*messages)
    assert err is not None and needle in err, err


@pytest.mark.parametrize(("extra", "needle"), [
    ({"tools": [{"type": "function", "function": {"name": "read file", "parameters": {}}}]}, "must match"),
    ({"tools": [{"type": "function", "function": {"name": "f"}}]}, "parameters must be a JSON schema object"),
    ({"tools": [{"type": "code", "function": {"name": "f", "parameters": {}}}]}, "'type' must be 'function'"),
    ({"tool_choice": "auto"}, "only allowed when 'tools' are specified"),
    ({"stream_options": {"include_usage": True}}, "only allowed when 'stream' is enabled"),
    ({"stream": "yes"}, "'stream' must be a boolean"),
    ({"model": ""}, "'model' is required"),
])
def test_openai_request_level_rejections(extra: dict[str, Any], needle: str) -> None:
    err = oa(U, **extra)
    assert err is not None and needle in err, err


# ------------------------------------------------------------------ Anthropic
A_USE = {"role": "assistant", "content": [
    {"type": "text", "text": "Let me look."},
    {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
    {"type": "tool_use", "id": "t2", "name": "list_dir", "input": {}}]}


def result(*ids: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "ok", **extra}
                                        for i in ids]}


def cached(n: int) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}}
                                        for i in range(n)]}


def test_anthropic_accepts_a_valid_conversation() -> None:
    assert an(U, A_USE, result("t1", "t2"), {"role": "assistant", "content": "done"}, U,
              system=[{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
              tools=[{"name": "read_file", "input_schema": {"type": "object"}}]) is None
    assert an(U, {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hm", "signature": "sig"}, {"type": "text", "text": "ok"}]}, U) is None
    assert an(cached(3), system=[{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}]) is None


@pytest.mark.parametrize(("messages", "needle"), [
    ([{"role": "assistant", "content": "hi"}], "starting with 'user'; expected 'user' here, got 'assistant'"),
    ([U, U], "messages.1: roles must alternate"),
    ([U, {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}], "messages.2: roles"),
    ([{"role": "system", "content": "s"}, U], 'Unexpected role "system"'),
    ([U, A_USE, result("t1")], ("messages.1: `tool_use` ids were found without `tool_result` blocks "
                                "immediately after: t2")),
    ([U, A_USE, result("t1", "t2", "t3")], "unexpected `tool_use_id` found in `tool_result` blocks: t3"),
    ([U, A_USE, result("t1", "t2", "t2")], "more than one `tool_result` block for tool_use id(s) t2"),
    ([U, A_USE], "`tool_use` ids were found without `tool_result` blocks immediately after: t1, t2"),
    ([U, A_USE, U], "without `tool_result` blocks"),
    ([result("x")], "unexpected `tool_use_id`"),
    ([cached(5)], "A maximum of 4 blocks with cache_control may be provided. Found 5."),
    ([{"role": "user", "content": ""}], "all messages must have non-empty content"),
    ([{"role": "user", "content": [{"type": "text", "text": "  "}]}], "non-whitespace text"),
    ([U, {"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}, U], "signature: Field required"),
    ([{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]}],
     "'tool_use' is not allowed in a user message"),
    ([U, {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": "{}"}]}],
     "input: must be an object"),
    ([U, {"role": "assistant", "content": "trailing "}], "cannot end with trailing whitespace"),
])
def test_anthropic_rejections(messages: list[dict[str, Any]], needle: str) -> None:
    err = an(*messages)
    assert err is not None and needle in err, err


@pytest.mark.parametrize(("extra", "needle"), [
    ({"max_tokens": None}, "max_tokens: Field required"),
    ({"system": [{"type": "image"}]}, "system blocks must be text blocks"),
    ({"system": 5}, "system: must be a string or an array"),
    ({"tools": [{"name": "f", "input_schema": {"type": "object"}}, {"name": "f", "input_schema": {"type": "object"}}]},
     "Tool names must be unique"),
    ({"tools": [{"name": "f"}]}, "input_schema: must be a JSON schema object"),
    ({"tool_choice": {"type": "any"}}, "requires 'tools'"),
    ({"thinking": {"type": "enabled", "budget_tokens": 2000}}, "must be greater than `thinking.budget_tokens`"),
    ({"thinking": {"type": "enabled", "budget_tokens": 10}, "max_tokens": 5000}, ">= 1024"),
    ({"system": [{"type": "text", "text": f"s{i}", "cache_control": {"type": "ephemeral"}} for i in range(3)],
      "tools": [{"name": f"t{i}", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}
                for i in range(2)]}, "Found 5"),
])
def test_anthropic_request_level_rejections(extra: dict[str, Any], needle: str) -> None:
    err = validate_anthropic({"model": "m", "max_tokens": 100, "messages": [U], **extra}, H)
    assert err is not None and needle in err, err


def test_anthropic_version_header_required() -> None:
    err = validate_anthropic({"model": "m", "max_tokens": 1, "messages": [U]}, {})
    assert err == "anthropic-version: header is required"


def test_nested_tool_result_cache_controls_count() -> None:
    inner = [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}] * 5
    msg = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": inner}]}
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]}
    err = an(U, use, msg)
    assert err is not None and "Found 5" in err


# ------------------------------------------------------------------ property: valid transcripts pass, gaps fail
rounds = st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=6)


def _transcript(shape: list[int]) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "s"}, U]
    n = 0
    for calls in shape:
        if calls == 0:
            msgs += [{"role": "assistant", "content": "ok"}, U]
            continue
        ids = [f"call_{n + i}" for i in range(calls)]
        n += calls
        msgs.append({"role": "assistant", "content": None, "tool_calls": [oa_call(i) for i in ids]})
        msgs += [tool(i) for i in ids]
    return msgs


@settings(max_examples=60, deadline=None)
@given(rounds, st.data())
def test_property_valid_transcripts_pass_and_dropping_a_result_fails(shape: list[int], data: st.DataObject) -> None:
    msgs = _transcript(shape)
    assert oa(*msgs) is None
    tool_rows = [i for i, m in enumerate(msgs) if m["role"] == "tool"]
    if tool_rows:
        drop = data.draw(st.sampled_from(tool_rows))
        assert oa(*(m for i, m in enumerate(msgs) if i != drop)) is not None


# ------------------------------------------------------------------ over HTTP
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_rejection_over_http_is_recorded_and_vendor_shaped(api: Api, wire: str) -> None:
    api.srv.push(text("unused"))
    bad = [U, U] if wire == "anthropic" else [U, tool("c9")]
    r = await api.post(wire, api.body(wire, bad))
    assert r.status_code == 400
    rec = api.srv.requests[-1]
    assert rec.rejected is not None and rec.body["messages"] == bad
    if wire == "openai":
        assert r.json()["error"]["type"] == "invalid_request_error" and r.json()["error"]["message"] == rec.rejected
    else:
        assert r.json() == {"type": "error", "error": {"type": "invalid_request_error", "message": rec.rejected}}
    assert (await api.complete(wire, stream=False))["content"] == "unused"  # the reply was not consumed


async def test_non_json_body_is_rejected_and_recorded(api: Api) -> None:
    r = await api.client.post(api.srv.openai_url + "/chat/completions", content=b"{nope",
                              headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]["message"]
    assert api.srv.requests[-1].raw == b"{nope" and api.srv.requests[-1].body == {}


async def test_lenient_mode_accepts_broken_transcripts(client: Any) -> None:
    async with ScriptedServer(strict=False) as srv:
        srv.push(text("fine"))
        r = await client.post(srv.anthropic_url + "/v1/messages", json={"model": "m", "messages": [U, U]})
        assert r.status_code == 200 and srv.requests[-1].rejected is None


# ------------------------------------------------------------------ fuzz: validators never crash
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
                         ["role", "content", "type", "text", "id", "name", "input", "tool_calls", "function",
                          "arguments", "tool_call_id", "tool_use_id", "cache_control", "signature", "thinking"]),
                         inner, max_size=4), max_leaves=12)
_roles = st.sampled_from(["user", "assistant", "tool", "system"])
_block = st.fixed_dictionaries({"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image"])},
                               optional={"text": _json, "id": _json, "name": _json, "input": _json,
                                         "tool_use_id": _json, "content": _json, "signature": _json})
_message = st.fixed_dictionaries({"role": _roles}, optional={
    "content": st.one_of(_json, st.lists(_block, max_size=3)), "tool_calls": _json, "tool_call_id": _json})


@settings(max_examples=300, deadline=None)
@given(st.lists(_message | _json, max_size=5), _json, _json)
def test_validators_never_crash(messages: list[Any], tools_value: Any, system: Any) -> None:
    for body in ({"model": "m", "messages": messages, "tools": tools_value},
                 {"model": "m", "max_tokens": 5, "messages": messages, "system": system, "tools": tools_value}):
        for result in (validate_openai(body), validate_anthropic(body, H)):
            assert result is None or isinstance(result, str)


def test_unhashable_types_are_rejected_not_crashing() -> None:
    err = an({"role": "user", "content": [{"type": ["text"]}]})
    assert err is not None and "is not allowed in a user message" in err
    err = oa({"role": "user", "content": [{"type": {"x": 1}}]})
    assert err is not None and "content part type must be one of" in err
