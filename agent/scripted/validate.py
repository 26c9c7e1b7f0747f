"""Strict request validation: reject what the real APIs reject, with a precise message.

Each ``validate_*`` function returns ``None`` for an acceptable request, else the 400 message.
The checks aim at the mistakes an agent's transcript handling makes (orphan or missing tool results,
broken alternation, malformed tool schemas, leaked internal fields), not at every API rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_OPENAI_ROLES = ("system", "developer", "user", "assistant", "tool")
_OPENAI_MESSAGE_KEYS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "refusal", "audio", "function_call",
                  "reasoning_content"},
    "tool": {"role", "content", "tool_call_id", "name"},
}
_ANTHROPIC_BLOCKS = {
    "user": {"text", "image", "document", "tool_result", "search_result"},
    "assistant": {"text", "tool_use", "thinking", "redacted_thinking", "server_tool_use",
                  "web_search_tool_result"},
}
MAX_CACHE_BREAKPOINTS = 4
_UNFORESEEN = (TypeError, KeyError, AttributeError, ValueError, IndexError)


class Invalid(Exception):
    """A request the real API would refuse with HTTP 400."""


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise Invalid(message)


def _stream_flag(body: Mapping[str, Any]) -> None:
    _require(isinstance(body.get("stream", False), bool), "'stream' must be a boolean")


# ================================================================ OpenAI
def validate_openai(body: Mapping[str, Any]) -> str | None:
    try:
        _openai(body)
    except Invalid as exc:
        return str(exc)
    except _UNFORESEEN as exc:  # a shape the checks did not foresee: still a clear 400, never a dropped connection
        return f"malformed request ({type(exc).__name__}: {exc})"
    return None


def _openai(body: Mapping[str, Any]) -> None:
    model = body.get("model")
    _require(isinstance(model, str) and bool(model), "'model' is required and must be a non-empty string")
    _stream_flag(body)
    _require("stream_options" not in body or body.get("stream") is True,
             "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
    _openai_tools(body)
    msgs = body.get("messages")
    _require(isinstance(msgs, list) and len(msgs) > 0, "'messages' must be a non-empty array")
    assert isinstance(msgs, list)
    open_at = -1  # index of the assistant message whose tool calls are being answered
    open_ids: list[str] = []
    answered: set[str] = set()
    for i, m in enumerate(msgs):
        where = f"messages[{i}]"
        _require(isinstance(m, dict), f"{where}: each message must be an object")
        role = m.get("role")
        _require(role in _OPENAI_ROLES, f"{where}: invalid role {role!r}; expected one of {list(_OPENAI_ROLES)}")
        extra = sorted(set(m) - _OPENAI_MESSAGE_KEYS[role])
        _require(not extra, f"{where}: Additional properties are not allowed for a {role} message: {extra}")
        if role == "tool":
            _openai_tool_message(m, where, open_at, open_ids, answered)
            continue
        if open_at >= 0:
            _openai_close(open_at, open_ids, answered, f"before {where} (role {role!r})")
            open_at, open_ids = -1, []
        if role == "assistant":
            open_ids = _openai_assistant(m, where)
            if open_ids:
                open_at, answered = i, set()
        else:
            _openai_content(m.get("content"), where, role)
    if open_at >= 0:
        _openai_close(open_at, open_ids, answered, "at the end of the messages")


def _openai_close(at: int, ids: list[str], answered: set[str], where: str) -> None:
    missing = [x for x in ids if x not in answered]
    _require(not missing, f"messages[{at}]: an assistant message with 'tool_calls' must be followed by tool "
                          f"messages responding to each 'tool_call_id'. The following tool_call_ids did not "
                          f"have response messages: {', '.join(missing)} (checked {where})")


def _openai_tool_message(m: Mapping[str, Any], where: str, open_at: int, open_ids: list[str],
                         answered: set[str]) -> None:
    _require(open_at >= 0, f"{where}: messages with role 'tool' must be a response to a preceding message "
                           f"with 'tool_calls' (no assistant tool call is open here)")
    tcid = m.get("tool_call_id")
    _require(isinstance(tcid, str) and bool(tcid), f"{where}: a tool message requires a string 'tool_call_id'")
    assert isinstance(tcid, str)
    _require(tcid in open_ids, f"{where}: tool_call_id {tcid!r} does not answer any tool call of the "
                               f"preceding assistant message messages[{open_at}] (ids: {open_ids})")
    _require(tcid not in answered, f"{where}: duplicate tool message for tool_call_id {tcid!r}")
    answered.add(tcid)
    _openai_content(m.get("content"), where, "tool")


def _openai_assistant(m: Mapping[str, Any], where: str) -> list[str]:
    calls = m.get("tool_calls")
    content = m.get("content")
    if calls is None:
        _require(content is not None or m.get("refusal") is not None,
                 f"{where}: an assistant message needs 'content' unless it has 'tool_calls'")
    else:
        _require(isinstance(calls, list) and len(calls) > 0,
                 f"{where}: 'tool_calls' must be a non-empty array (omit it when there are no calls)")
    if content is not None:
        _openai_content(content, where, "assistant")
    ids: list[str] = []
    for j, tc in enumerate(calls or []):
        at = f"{where}.tool_calls[{j}]"
        _require(isinstance(tc, dict), f"{at}: must be an object")
        tcid = tc.get("id")
        _require(isinstance(tcid, str) and bool(tcid), f"{at}: 'id' must be a non-empty string")
        _require(tc.get("type") == "function", f"{at}: 'type' must be 'function'")
        fn = tc.get("function")
        _require(isinstance(fn, dict) and isinstance(fn.get("name"), str) and bool(fn.get("name")),
                 f"{at}: 'function.name' must be a non-empty string")
        assert isinstance(fn, dict)
        _require(isinstance(fn.get("arguments"), str),
                 f"{at}: 'function.arguments' must be a JSON-encoded string, got "
                 f"{type(fn.get('arguments')).__name__}")
        _require(tcid not in ids, f"{at}: duplicate tool call id {tcid!r}")
        ids.append(str(tcid))
    return ids


def _openai_content(content: Any, where: str, role: str) -> None:
    if isinstance(content, str):
        return
    _require(isinstance(content, list), f"{where}: 'content' of a {role} message must be a string or an "
                                        f"array of content parts, got {type(content).__name__}")
    allowed = {"text", "image_url", "input_audio", "file"} if role == "user" else {"text", "refusal"}
    for j, part in enumerate(content):
        at = f"{where}.content[{j}]"
        _require(isinstance(part, dict) and isinstance(part.get("type"), str) and part["type"] in allowed,
                 f"{at}: content part type must be one of {sorted(allowed)} for a {role} message")
        if part["type"] == "text":
            _require(isinstance(part.get("text"), str), f"{at}: a text part needs a string 'text'")


def _openai_tools(body: Mapping[str, Any]) -> None:
    tools = body.get("tools")
    if tools is None:
        _require("tool_choice" not in body or body["tool_choice"] == "none",
                 "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.")
        return
    _require(isinstance(tools, list), "'tools' must be an array")
    assert isinstance(tools, list)
    for j, t in enumerate(tools):
        at = f"tools[{j}]"
        _require(isinstance(t, dict) and t.get("type") == "function", f"{at}: 'type' must be 'function'")
        fn = t.get("function")
        _require(isinstance(fn, dict), f"{at}: 'function' must be an object")
        assert isinstance(fn, dict)
        name = fn.get("name")
        _require(isinstance(name, str) and bool(_NAME.match(name)),
                 f"{at}.function.name: {name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$")
        _require(isinstance(fn.get("parameters"), dict), f"{at}.function.parameters must be a JSON schema object")
        _require(isinstance(fn.get("description", ""), str), f"{at}.function.description must be a string")


# ================================================================ Anthropic
def validate_anthropic(body: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    try:
        _anthropic(body, headers)
    except Invalid as exc:
        return str(exc)
    except _UNFORESEEN as exc:
        return f"malformed request ({type(exc).__name__}: {exc})"
    return None


def _anthropic(body: Mapping[str, Any], headers: Mapping[str, str]) -> None:
    _require(bool(headers.get("anthropic-version")), "anthropic-version: header is required")
    model = body.get("model")
    _require(isinstance(model, str) and bool(model), "model: Field required (a non-empty string)")
    max_tokens = body.get("max_tokens")
    _require(isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens >= 1,
             "max_tokens: Field required (an integer >= 1)")
    assert isinstance(max_tokens, int)
    _stream_flag(body)
    breakpoints = _anthropic_system(body.get("system"))
    breakpoints += _anthropic_tools(body)
    _anthropic_thinking(body.get("thinking"), max_tokens)
    msgs = body.get("messages")
    _require(isinstance(msgs, list) and len(msgs) > 0, "messages: must be a non-empty array")
    assert isinstance(msgs, list)
    pending: list[str] = []  # tool_use ids of the previous assistant message
    for i, m in enumerate(msgs):
        where = f"messages.{i}"
        _require(isinstance(m, dict), f"{where}: each message must be an object")
        role = m.get("role")
        if role == "system":
            raise Invalid(f'{where}: Unexpected role "system". The Messages API accepts a top-level `system` '
                          f'parameter, not "system" as an input message role.')
        _require(role in ("user", "assistant"), f"{where}.role: must be 'user' or 'assistant', got {role!r}")
        expected = "user" if i % 2 == 0 else "assistant"
        _require(role == expected, f"{where}: roles must alternate between 'user' and 'assistant', starting "
                                   f"with 'user'; expected {expected!r} here, got {role!r}")
        last = i == len(msgs) - 1
        blocks = _anthropic_content(m.get("content"), where, role, last)
        breakpoints += sum(1 for b in blocks if "cache_control" in b)
        breakpoints += sum(_nested_cache_controls(b) for b in blocks)
        results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
        if pending:
            missing = [x for x in pending if x not in results]
            _require(not missing, f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks "
                                  f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                                  f"corresponding `tool_result` block in the next message.")
        unexpected = [x for x in results if x not in pending]
        _require(not unexpected, f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: "
                                 f"{', '.join(unexpected)}. Each `tool_result` block must have a "
                                 f"corresponding `tool_use` block in the previous message.")
        dup = sorted({x for x in results if results.count(x) > 1})
        _require(not dup, f"{where}: more than one `tool_result` block for tool_use id(s) {', '.join(dup)}")
        pending = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        _require(len(set(pending)) == len(pending), f"{where}: `tool_use` ids must be unique")
        if pending and last:
            raise Invalid(f"{where}: `tool_use` ids were found without `tool_result` blocks immediately "
                          f"after: {', '.join(pending)}. Each `tool_use` block must have a corresponding "
                          f"`tool_result` block in the next message.")
    _require(breakpoints <= MAX_CACHE_BREAKPOINTS, f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with "
                                                   f"cache_control may be provided. Found {breakpoints}.")


def _nested_cache_controls(block: Mapping[str, Any]) -> int:
    inner = block.get("content")
    if block.get("type") != "tool_result" or not isinstance(inner, list):
        return 0
    return sum(1 for b in inner if isinstance(b, dict) and "cache_control" in b)


def _cache_control(block: Mapping[str, Any], at: str) -> None:
    cc = block.get("cache_control")
    if cc is not None:
        _require(isinstance(cc, dict) and cc.get("type") == "ephemeral",
                 f"{at}.cache_control: must be {{'type': 'ephemeral'}} (optionally with 'ttl')")


def _anthropic_system(system: Any) -> int:
    if system is None or isinstance(system, str):
        return 0
    _require(isinstance(system, list), "system: must be a string or an array of text blocks")
    assert isinstance(system, list)
    for j, b in enumerate(system):
        at = f"system.{j}"
        _require(isinstance(b, dict) and b.get("type") == "text", f"{at}: system blocks must be text blocks")
        _require(isinstance(b.get("text"), str) and bool(b["text"].strip()),
                 f"{at}: text content blocks must contain non-whitespace text")
        _cache_control(b, at)
    return sum(1 for b in system if "cache_control" in b)


def _anthropic_tools(body: Mapping[str, Any]) -> int:
    tools = body.get("tools")
    choice = body.get("tool_choice")
    if choice is not None:
        _require(isinstance(choice, dict) and choice.get("type") in ("auto", "any", "tool", "none"),
                 "tool_choice: must be an object with type 'auto', 'any', 'tool' or 'none'")
        assert isinstance(choice, dict)
        _require(choice["type"] in ("auto", "none") or bool(tools),
                 f"tool_choice: type {choice['type']!r} requires 'tools'")
        _require(choice["type"] != "tool" or isinstance(choice.get("name"), str),
                 "tool_choice: type 'tool' requires a 'name'")
    if tools is None:
        return 0
    _require(isinstance(tools, list), "tools: must be an array")
    assert isinstance(tools, list)
    names: set[str] = set()
    for j, t in enumerate(tools):
        at = f"tools.{j}"
        _require(isinstance(t, dict), f"{at}: must be an object")
        name = t.get("name")
        _require(isinstance(name, str) and bool(_NAME.match(name)),
                 f"{at}.name: {name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$")
        assert isinstance(name, str)
        if t.get("type") in (None, "custom"):
            schema = t.get("input_schema")
            _require(isinstance(schema, dict) and schema.get("type") == "object",
                     f"{at}.input_schema: must be a JSON schema object with type 'object'")
        _require(name not in names, f"tools: Tool names must be unique; {name!r} is repeated")
        names.add(name)
        _cache_control(t, at)
    return sum(1 for t in tools if "cache_control" in t)


def _anthropic_thinking(thinking: Any, max_tokens: int) -> None:
    if thinking is None:
        return
    _require(isinstance(thinking, dict) and thinking.get("type") in ("enabled", "disabled", "adaptive"),
             "thinking: must be an object with type 'enabled', 'disabled' or 'adaptive'")
    if thinking["type"] == "enabled":
        budget = thinking.get("budget_tokens")
        _require(isinstance(budget, int) and budget >= 1024, "thinking.budget_tokens: must be an integer >= 1024")
        _require(budget < max_tokens, "`max_tokens` must be greater than `thinking.budget_tokens`")


def _anthropic_content(content: Any, where: str, role: str, last: bool) -> list[dict[str, Any]]:
    final_assistant = last and role == "assistant"
    if isinstance(content, str):
        _require(bool(content.strip()) or (final_assistant and content == ""),
                 f"{where}: all messages must have non-empty content except for the optional final "
                 f"assistant message")
        _require(not final_assistant or content == content.rstrip(),
                 f"{where}: final assistant content cannot end with trailing whitespace")
        return []
    _require(isinstance(content, list), f"{where}.content: must be a string or an array of content blocks")
    assert isinstance(content, list)
    _require(len(content) > 0 or final_assistant,
             f"{where}: all messages must have non-empty content except for the optional final "
             f"assistant message")
    for j, b in enumerate(content):
        _anthropic_block(b, f"{where}.content.{j}", role)
    if final_assistant and content and content[-1].get("type") == "text":
        _require(content[-1]["text"] == content[-1]["text"].rstrip(),
                 f"{where}: final assistant content cannot end with trailing whitespace")
    return content


def _anthropic_block(b: Any, at: str, role: str) -> None:
    _require(isinstance(b, dict), f"{at}: each content block must be an object")
    kind = b.get("type")
    allowed = _ANTHROPIC_BLOCKS[role]
    _require(isinstance(kind, str) and kind in allowed, f"{at}.type: {kind!r} is not allowed in a {role} message "
                              f"(allowed: {sorted(allowed)})")
    _cache_control(b, at)
    if kind == "text":
        _require(isinstance(b.get("text"), str) and bool(b["text"].strip()),
                 f"{at}: text content blocks must contain non-whitespace text")
    elif kind == "tool_use":
        _require(isinstance(b.get("id"), str) and bool(b["id"]), f"{at}.id: must be a non-empty string")
        _require(isinstance(b.get("name"), str) and bool(b["name"]), f"{at}.name: must be a non-empty string")
        _require(isinstance(b.get("input"), dict), f"{at}.input: must be an object (the parsed arguments), got "
                                                   f"{type(b.get('input')).__name__}")
    elif kind == "tool_result":
        _require(isinstance(b.get("tool_use_id"), str), f"{at}.tool_use_id: must be a string")
        inner = b.get("content", "")
        _require(isinstance(inner, str) or isinstance(inner, list) and all(
            isinstance(x, dict) and x.get("type") in ("text", "image", "document", "search_result")
            for x in inner), f"{at}.content: must be a string or an array of text/image blocks")
        _require(isinstance(b.get("is_error", False), bool), f"{at}.is_error: must be a boolean")
    elif kind == "thinking":
        _require(isinstance(b.get("thinking"), str), f"{at}.thinking: must be a string")
        _require(isinstance(b.get("signature"), str) and bool(b["signature"]),
                 f"{at}.signature: Field required (send thinking blocks back with their signature, or drop them)")
    elif kind == "redacted_thinking":
        _require(isinstance(b.get("data"), str), f"{at}.data: must be a string")
