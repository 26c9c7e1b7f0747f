"""Unit tests of agent/providers/json_mode.py: the schema, the reply parser, the fallback, the stream."""

from __future__ import annotations

import json
import random
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from agentls.agent.providers.json_mode import (
    FINAL_ANSWER,
    JSON_MODE_SYSTEM_NOTE,
    FinalAnswerStream,
    build_response_format,
    extract_tool_calls,
    parse_json_reply,
)

from .conftest import TOOL_NAMES


# ----------------------------------------------------------------------------- build_response_format
def test_response_format_shape(tool_schemas: list[dict[str, Any]]) -> None:
    rf = build_response_format(tool_schemas)
    assert rf["type"] == "json_schema"
    assert rf["json_schema"]["strict"] is True
    assert rf["json_schema"]["name"]
    variants = rf["json_schema"]["schema"]["anyOf"]
    names = [v["properties"]["name"]["const"] for v in variants]
    assert names == [t["function"]["name"] for t in tool_schemas] + [FINAL_ANSWER]
    for v, tool in zip(variants, tool_schemas, strict=False):
        # The tool's parameters, with only the declared arguments allowed.
        assert v["properties"]["arguments"] == {"additionalProperties": False, **tool["function"]["parameters"]}
        assert v["required"] == ["name", "arguments"]
    assert variants[-1]["properties"]["arguments"]["required"] == ["text"]


def test_response_format_validates_calls_and_rejects_wrong_arguments(tool_schemas: list[dict[str, Any]]) -> None:
    schema = build_response_format(tool_schemas)["json_schema"]["schema"]
    jsonschema.validate({"name": "read_file", "arguments": {"path": "README.md"}}, schema)
    jsonschema.validate({"name": "final_answer", "arguments": {"text": "done"}}, schema)
    for bad in ({"name": "read_file", "arguments": {}},  # path is required
                {"name": "nope", "arguments": {}},
                {"name": "final_answer", "arguments": {}},
                {"name": "write_file", "arguments": {"path": "a"}},
                {"name": "read_file", "arguments": {"path": "a"}, "extra": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_response_format_copies_dedupes_and_tolerates_odd_tools(tool_schemas: list[dict[str, Any]]) -> None:
    odd = [*tool_schemas, tool_schemas[0], {"type": "function", "function": {"name": "ping"}},
           {"type": "function", "function": {"name": FINAL_ANSWER, "parameters": {}}}, {"function": {}}]
    rf = build_response_format(odd)
    names = [v["properties"]["name"]["const"] for v in rf["json_schema"]["schema"]["anyOf"]]
    assert names.count("read_file") == 1 and names.count(FINAL_ANSWER) == 1 and "ping" in names
    rf["json_schema"]["schema"]["anyOf"][0]["properties"]["arguments"]["properties"]["x"] = 1
    assert "x" not in tool_schemas[0]["function"]["parameters"]["properties"]
    assert [v["properties"]["name"]["const"] for v in build_response_format([])["json_schema"]["schema"]["anyOf"]] \
        == [FINAL_ANSWER]


def test_system_note_mentions_both_shapes() -> None:
    assert "final_answer" in JSON_MODE_SYSTEM_NOTE and '"arguments"' in JSON_MODE_SYSTEM_NOTE


# ----------------------------------------------------------------------------- parse_json_reply
def test_parse_tool_call() -> None:
    text, calls = parse_json_reply('{"name": "read_file", "arguments": {"path": "README.md", "limit": 5}}')
    assert text is None and len(calls) == 1
    call = calls[0]
    assert call["type"] == "function" and call["function"]["name"] == "read_file"
    assert isinstance(call["function"]["arguments"], str)
    assert json.loads(call["function"]["arguments"]) == {"path": "README.md", "limit": 5}
    assert call["id"].startswith("call_")


def test_parse_final_answer() -> None:
    assert parse_json_reply('{"name": "final_answer", "arguments": {"text": "It says hi.\\n"}}') == \
        ("It says hi.\n", [])


@pytest.mark.parametrize("content", [
    '\n\n  {"name": "read_file", "arguments": {"path": "a"}}  \n',
    '{"name": "read_file", "arguments": {"path": "a"}}<|im_end|> trailing junk {',
    '```json\n{"name": "read_file", "arguments": {"path": "a"}}\n```',
    '{"arguments": {"path": "a"}, "name": "read_file"}',
])
def test_parse_tolerates_whitespace_fences_and_junk(content: str) -> None:
    text, calls = parse_json_reply(content)
    assert text is None and [c["function"]["name"] for c in calls] == ["read_file"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": "a"}


@pytest.mark.parametrize("content", ["", "I think the answer is 4.", "{not json", '{"path": "a"}', "[1, 2]", "42"])
def test_parse_unparsable_or_not_a_call_returns_content(content: str) -> None:
    assert parse_json_reply(content) == (content, [])


def test_parse_fresh_unique_ids_and_prefix() -> None:
    reply = '{"name": "list_dir", "arguments": {}}'
    ids = {parse_json_reply(reply, id_prefix="local")[1][0]["id"] for _ in range(200)}
    assert len(ids) == 200 and all(i.startswith("local_") for i in ids)


def test_parse_string_arguments_are_normalized_or_kept_verbatim() -> None:
    _, calls = parse_json_reply('{"name": "read_file", "arguments": "{\\"path\\": \\"a\\"}"}')
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": "a"}
    _, calls = parse_json_reply('{"name": "read_file", "arguments": "{path: a"}')
    assert calls[0]["function"]["arguments"] == "{path: a"  # left for the loop's argument repair
    _, calls = parse_json_reply('{"name": "list_dir"}')
    assert calls[0]["function"]["arguments"] == "{}"


def test_parse_list_of_calls() -> None:
    text, calls = parse_json_reply('[{"name": "read_file", "arguments": {"path": "a"}},'
                                   ' {"name": "read_file", "arguments": {"path": "b"}}]')
    assert text is None and len(calls) == 2 and calls[0]["id"] != calls[1]["id"]


def test_parse_salvages_a_cut_final_answer() -> None:
    assert parse_json_reply('{"name": "final_answer", "arguments": {"text": "The README sa') == \
        ("The README sa", [])
    cut_call = '{"name": "read_file", "arguments": {"pa'
    assert parse_json_reply(cut_call) == (cut_call, [])


# ----------------------------------------------------------------------------- extract_tool_calls
def _names(result: tuple[str | None, list[Any]] | None) -> list[str]:
    assert result is not None
    return [c["function"]["name"] for c in result[1]]


def test_extract_fenced_call_keeps_the_prose() -> None:
    content = ('I will read it first.\n```json\n{"name": "read_file", "arguments": {"path": "README.md"}}\n```\n'
               "Then I'll answer.")
    result = extract_tool_calls(content, TOOL_NAMES)
    assert _names(result) == ["read_file"]
    assert result is not None and result[0] == "I will read it first.\n\nThen I'll answer."
    assert json.loads(result[1][0]["function"]["arguments"]) == {"path": "README.md"}


def test_extract_bare_call() -> None:
    result = extract_tool_calls('{"name": "list_dir", "arguments": {"path": "."}}', TOOL_NAMES)
    assert result is not None and result[0] is None and _names(result) == ["list_dir"]


@pytest.mark.parametrize("content", [
    '{"tool": "read_file", "parameters": {"path": "a"}}',
    '{"function": "read_file", "args": {"path": "a"}}',
    '{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\": \\"a\\"}"}}',
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tool_call>',
    '```\n{"name": "read_file", "arguments": {"path": "a"}}\n```',
    '{"tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}]}',
])
def test_extract_variants(content: str) -> None:
    result = extract_tool_calls(content, TOOL_NAMES)
    assert _names(result) == ["read_file"]
    assert result is not None and json.loads(result[1][0]["function"]["arguments"]) == {"path": "a"}
    assert result[0] is None


def test_extract_list_and_several_blocks() -> None:
    listed = '[{"name": "read_file", "arguments": {"path": "a"}}, {"tool": "list_dir", "parameters": {}}]'
    assert _names(extract_tool_calls(listed, TOOL_NAMES)) == ["read_file", "list_dir"]
    two = ('First:\n```json\n{"name": "read_file", "arguments": {"path": "a"}}\n```\nand\n'
           '{"name": "read_file", "arguments": {"path": "b"}}')
    result = extract_tool_calls(two, TOOL_NAMES)
    assert result is not None and [json.loads(c["function"]["arguments"])["path"] for c in result[1]] == ["a", "b"]
    assert result[0] == "First:\n\nand"


@pytest.mark.parametrize("content", [
    "",
    "The file is empty.",
    'Call it like this: ```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    '{"name": "my-package", "version": "1.0.0", "dependencies": {}}',  # a package.json, not a call
    '{"name": "read_file", "version": "1.0.0"}',  # a known name, but data keys: not a call
    '[{"name": "read_file", "arguments": {}}, {"name": "unknown", "arguments": {}}]',
    '{"path": "README.md"}',
])
def test_extract_does_not_fire_on_examples_or_data(content: str) -> None:
    assert extract_tool_calls(content, TOOL_NAMES) is None


def test_extract_call_without_arguments() -> None:
    result = extract_tool_calls('Listing: {"name": "list_dir"}', TOOL_NAMES)
    assert _names(result) == ["list_dir"] and result is not None and result[1][0]["function"]["arguments"] == "{}"


def test_extract_needs_known_tools() -> None:
    assert extract_tool_calls('{"name": "read_file", "arguments": {}}', ()) is None


def test_extract_nested_data_is_not_scanned_for_calls() -> None:
    content = '{"examples": [{"name": "read_file", "arguments": {"path": "x"}}], "note": "doc"}'
    assert extract_tool_calls(content, TOOL_NAMES) is None


# ----------------------------------------------------------------------------- FinalAnswerStream
def _stream(s: str, sizes: list[int]) -> tuple[str, str | None]:
    f = FinalAnswerStream()
    out, i, k = [], 0, 0
    while i < len(s):
        n = sizes[k % len(sizes)]
        out.append(f.feed(s[i:i + n]))
        i, k = i + n, k + 1
    return "".join(out), f.name


ANSWERS = ["plain", 'quote " backslash \\ slash / tab \t nl \n cr \r', "accents é ü 中文",
           "emoji 😀 and 🎉 pairs", "control \b \f \x01", ""]


@pytest.mark.parametrize("answer", ANSWERS)
@pytest.mark.parametrize("ascii_only", [True, False])
@pytest.mark.parametrize("indent", [None, 2])
def test_stream_decodes_final_answer_split_anywhere(answer: str, ascii_only: bool, indent: int | None) -> None:
    reply = json.dumps({"name": "final_answer", "arguments": {"text": answer}}, ensure_ascii=ascii_only,
                       indent=indent)
    for size in (1, 2, 3, 5, 7, len(reply)):
        assert _stream(reply, [size]) == (answer, "final_answer")
    rng = random.Random(answer)
    for _ in range(20):
        assert _stream(reply, [rng.randint(1, 6) for _ in range(10)]) == (answer, "final_answer")


def test_stream_returns_nothing_for_a_tool_call() -> None:
    reply = json.dumps({"name": "write_file", "arguments": {"path": "a", "content": "text", "text": "no"}})
    for size in (1, 4, len(reply)):
        assert _stream(reply, [size]) == ("", "write_file")


def test_stream_holds_text_until_the_name_is_known() -> None:
    answer = {"arguments": {"x": [1, {"text": "inner"}], "n": 2.5, "ok": True, "text": "later ✓"},
              "name": "final_answer"}
    reply = json.dumps(answer)
    f = FinalAnswerStream()
    cut = reply.index('"name"')
    assert f.feed(reply[:cut]) == ""
    assert f.feed(reply[cut:]) == "later ✓"
    held_for_a_call = json.dumps({"arguments": {"text": "x"}, "name": "read_file"})
    assert _stream(held_for_a_call, [1]) == ("", "read_file")


def test_stream_deltas_are_incremental() -> None:
    f = FinalAnswerStream()
    assert f.feed('{"name": "final_answer", "arguments": {"text": "He') == "He"
    assert f.feed("llo\\") == "llo"
    assert f.feed('nwor') == "\nwor"
    assert f.feed("ld\\ud83d") == "ld"
    assert f.feed("\\ude00") == "😀"
    assert f.feed('"}}') == ""
