"""docs/loop.md §3, property-based: ``repair`` turns any message sequence into a valid one and is idempotent."""

from __future__ import annotations

import copy
import json
from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentls.agent.transcript import repair, violations
from agentls.agent.types import Message

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))

ids = st.one_of(st.sampled_from(["a", "b", "c", "d", ""]), st.none(), st.integers(0, 2))
texts = st.text(alphabet="abcxyz \n", max_size=12)
content = st.one_of(st.none(), texts,
                    st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": texts}), max_size=2))
arguments = st.one_of(st.sampled_from(["{}", '{"path": "a"}', "{bad", ""]),
                      st.dictionaries(st.sampled_from(["path", "n"]), st.integers(0, 3), max_size=2))
call = st.one_of(
    st.fixed_dictionaries({"id": ids, "type": st.just("function"),
                           "function": st.fixed_dictionaries({"name": st.sampled_from(["read_file", "list_dir", ""]),
                                                              "arguments": arguments})}),
    st.just({"id": "x"}), st.just("junk"), st.fixed_dictionaries({"id": ids, "function": st.just(None)}))
message = st.one_of(
    st.fixed_dictionaries({"role": st.just("user"), "content": content}),
    st.fixed_dictionaries({"role": st.just("system"), "content": content}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": content},
                          optional={"tool_calls": st.lists(call, max_size=3), "reasoning": texts}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": ids, "content": content},
                          optional={"name": st.sampled_from(["read_file", "list_dir"])}),
    st.fixed_dictionaries({"role": st.sampled_from(["function", "developer", "bogus"]), "content": content}),
    st.just("not a message"), st.integers(), st.none(),
)
sequences = st.lists(message, max_size=14)


@SETTINGS
@given(sequences)
def test_repair_always_yields_a_valid_transcript(messages: list[Any]) -> None:
    assert violations(repair(messages)) == []


@SETTINGS
@given(sequences)
def test_repair_is_idempotent(messages: list[Any]) -> None:
    once = repair(messages)
    assert repair(once) == once


@SETTINGS
@given(sequences)
def test_repair_never_mutates_its_input(messages: list[Any]) -> None:
    before = copy.deepcopy(messages)
    repair(messages)
    assert messages == before


@SETTINGS
@given(sequences)
def test_repair_keeps_every_user_text(messages: list[Any]) -> None:
    out = json.dumps(repair(messages))
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str) \
                and m["content"].strip():
            assert json.dumps(m["content"])[1:-1] in out


@st.composite
def valid_transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """system?, then exchanges: user, rounds of assistant(tool_calls)+results, an optional final answer."""
    out: list[dict[str, Any]] = []
    if draw(st.booleans()):
        out.append({"role": "system", "content": draw(texts)})
    n = 0
    for _ in range(draw(st.integers(1, 4))):
        out.append({"role": "user", "content": draw(texts)})
        for _ in range(draw(st.integers(0, 3))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                n += 1
                calls.append({"id": f"call_{n}", "type": "function",
                              "function": {"name": "read_file", "arguments": json.dumps({"path": f"f{n}"})}})
            out.append({"role": "assistant", "content": draw(st.one_of(st.none(), texts)), "tool_calls": calls})
            out += [{"role": "tool", "tool_call_id": c["id"], "name": "read_file", "content": draw(texts)}
                    for c in calls]
        if draw(st.booleans()) or out[-1]["role"] == "user":
            out.append({"role": "assistant", "content": draw(texts) or "ok"})
    return out


@SETTINGS
@given(valid_transcripts())
def test_valid_transcripts_are_left_as_they_are(messages: list[dict[str, Any]]) -> None:
    assert violations(cast(list[Message], messages)) == []
    assert repair(messages) == messages
