"""Tool calls for models without native tool calling: grammar-constrained JSON, and a fallback parser.

``tool_mode = "json"`` asks the server for a ``response_format`` JSON schema that admits exactly one
object per reply: a call of one of the tools, ``{"name": <tool>, "arguments": <its parameters>}``, or
the synthetic ``{"name": "final_answer", "arguments": {"text": ...}}``. Servers built on llama.cpp
(and vLLM, Ollama, LM Studio) compile the schema into a grammar, so even a 1.5B model always writes a
well-formed call. The reply is then converted to ordinary ``tool_calls`` and the loop sees no difference.

``extract_tool_calls`` is the ``native``-mode fallback: models that know their tools but write the call
as (fenced or bare) JSON in ``content`` instead of ``tool_calls``.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Collection
from typing import Any

from .json_format import FINAL_ANSWER, SCHEMA_NAME, build_response_format
from ..data_files import BadData, json_value
from ..types import ToolCall

__all__ = ["FINAL_ANSWER", "JSON_MODE_SYSTEM_NOTE", "SCHEMA_NAME", "FinalAnswerStream",
           "build_response_format", "extract_tool_calls", "new_call_id", "parse_json_reply"]

JSON_MODE_SYSTEM_NOTE = (
    "Reply with exactly one JSON object and nothing else. To use a tool: "
    '{"name": "<tool name>", "arguments": {...}}. When you have what you need, answer the user: '
    '{"name": "final_answer", "arguments": {"text": "<your answer>"}}. '
    "One tool call per reply; never repeat a call whose result you already have."
)

def new_call_id(prefix: str = "call") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _arguments_json(arguments: Any) -> str:
    """Arguments as the JSON string ``tool_calls`` carry. A string that isn't JSON is kept as-is, so
    the loop's argument repair sees exactly what the model wrote."""
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        try:
            decoded = json_value(arguments)
        except BadData:
            return arguments
        return json.dumps(decoded, ensure_ascii=False) if isinstance(decoded, dict) else arguments
    return json.dumps(arguments, ensure_ascii=False)


def _make_call(name: str, arguments: Any, id_prefix: str) -> ToolCall:
    return {"id": new_call_id(id_prefix), "type": "function",
            "function": {"name": name, "arguments": _arguments_json(arguments)}}


# ----------------------------------------------------------------------------- json mode replies
_FENCE_START = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*")


def _decode_first(content: str) -> Any:
    """The first JSON value of ``content`` (leading whitespace, a code fence and trailing junk allowed)."""
    m = _FENCE_START.match(content)
    value, _ = json.JSONDecoder().raw_decode(content[m.end() if m else 0:].lstrip())
    return value


def _final_text(arguments: Any) -> str:
    if isinstance(arguments, dict):
        value = arguments.get("text", arguments.get("answer", arguments.get("content")))
        if isinstance(value, str):
            return value
        return json.dumps(arguments, ensure_ascii=False)
    if isinstance(arguments, str):
        return arguments
    return "" if arguments is None else json.dumps(arguments, ensure_ascii=False)


def parse_json_reply(content: str, *, id_prefix: str = "call") -> tuple[str | None, list[ToolCall]]:
    """A constrained reply as ``(final text or None, tool calls)``.

    Each call gets a fresh unique id and its ``arguments`` as a JSON string. ``final_answer`` becomes
    the text. Unparsable content, or JSON that is not a call, comes back as ``(content, [])``.
    """
    try:
        value = _decode_first(content)
    except ValueError:
        return _salvage_final(content), []
    items = value if isinstance(value, list) else [value]
    texts: list[str] = []
    calls: list[ToolCall] = []
    for item in items:
        shape = _call_shape(item)
        if shape is None:
            return content, []
        name, arguments = shape
        if name == FINAL_ANSWER:
            texts.append(_final_text(arguments))
        else:
            calls.append(_make_call(name, arguments, id_prefix))
    if not texts and not calls:
        return content, []
    return ("\n\n".join(texts) if texts else None), calls


def _salvage_final(content: str) -> str:
    """The text of a ``final_answer`` cut short (``finish_reason=length``), else ``content``."""
    stream = FinalAnswerStream()
    text = stream.feed(content)
    return text if stream.name == FINAL_ANSWER and text else content


# ----------------------------------------------------------------------------- native-mode fallback
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "input")
_FENCED = re.compile(r"```[ \t]*(?:json|JSON|tool_call|javascript|js)?[ \t]*\n?(.*?)```", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_MAX_SCAN = 200_000


def _call_shape(item: Any) -> tuple[str, Any] | None:
    """``(name, arguments)`` when ``item`` looks like one tool call, in any of the usual spellings:
    ``{"name", "arguments"}``, ``{"tool", "parameters"}``, ``{"function": "x", "args"}`` or OpenAI's
    ``{"type": "function", "function": {"name", "arguments"}}``."""
    if not isinstance(item, dict):
        return None
    fn = item.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
        return _call_shape(fn)
    name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
    if not name:
        return None
    arg_key = next((k for k in _ARG_KEYS if k in item), None)
    extra = set(item) - set(_NAME_KEYS) - set(_ARG_KEYS) - {"type", "id"}
    if arg_key is None and extra:
        return None  # {"name": "x", "version": 1} is data, not a call
    return name, item.get(arg_key) if arg_key else {}


def _calls_in(value: Any, tool_names: Collection[str]) -> list[tuple[str, Any]] | None:
    """The calls a decoded JSON value holds, if all of it is calls of known tools."""
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        value = value["tool_calls"]
    items = value if isinstance(value, list) else [value]
    if not items:
        return None
    found: list[tuple[str, Any]] = []
    for item in items:
        shape = _call_shape(item)
        if shape is None or shape[0] not in tool_names:
            return None
        found.append(shape)
    return found


def _scan(content: str, tool_names: Collection[str]) -> list[tuple[int, int, list[tuple[str, Any]]]]:
    """Spans ``(start, end, calls)`` of the call-shaped JSON in ``content``: fenced blocks,
    ``<tool_call>`` tags, then bare objects or lists."""
    spans: list[tuple[int, int, list[tuple[str, Any]]]] = []
    decoder = json.JSONDecoder()

    def covered(i: int) -> bool:
        return any(s <= i < e for s, e, _ in spans)

    for pattern in (_FENCED, _TAGGED):
        for m in pattern.finditer(content):
            if covered(m.start()):
                continue
            body = m.group(1).strip()
            try:
                value, end = decoder.raw_decode(body)
            except ValueError:
                continue
            if body[end:].strip():
                continue
            calls = _calls_in(value, tool_names)
            if calls:
                spans.append((m.start(), m.end(), calls))
    i, limit = 0, min(len(content), _MAX_SCAN)
    while i < limit:
        if content[i] not in "{[" or covered(i):
            i += 1
            continue
        try:
            value, end = decoder.raw_decode(content, i)
        except ValueError:
            i += 1
            continue
        calls = _calls_in(value, tool_names)
        if calls:
            spans.append((i, end, calls))
        i = end  # a decoded value that is not a call is skipped whole: its inner objects are data
    return sorted(spans, key=lambda s: s[0])


def extract_tool_calls(content: str, tool_names: Collection[str],
                       *, id_prefix: str = "call") -> tuple[str | None, list[ToolCall]] | None:
    """Tool calls a ``native``-mode model wrote as JSON in ``content`` instead of ``tool_calls``.

    Returns ``(remaining text or None, calls)``, or None when ``content`` holds no call of a known
    tool. JSON whose name is not one of ``tool_names`` (an example, a config file) never counts.
    """
    if not content or not tool_names or ("{" not in content and "[" not in content):
        return None
    spans = _scan(content, tool_names)
    if not spans:
        return None
    calls: list[ToolCall] = []
    pieces: list[str] = []
    pos = 0
    for start, end, found in spans:
        pieces.append(content[pos:start])
        pos = end
        calls.extend(_make_call(name, args, id_prefix) for name, args in found)
    pieces.append(content[pos:])
    rest = re.sub(r"\n{3,}", "\n\n", "".join(pieces)).strip()
    return (rest or None), calls


# ----------------------------------------------------------------------------- streaming
_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class FinalAnswerStream:
    """Decodes, as it streams, the ``final_answer`` text of a json-mode reply.

    ``feed(delta)`` returns the characters of ``arguments.text`` decoded so far that were not returned
    yet, handling escapes (``\\n``, ``\\u00e9``, surrogate pairs) split across deltas. While the reply
    is a tool call it returns "". If ``arguments`` streams before ``name``, the text is held back and
    released once the name turns out to be ``final_answer``.
    """

    def __init__(self) -> None:
        self._stack: list[list[Any]] = []  # per container: [kind, key or index, expecting]
        self._in_string = False
        self._string_is_key = False
        self._buf: list[str] = []  # the current string (keys and the top-level name)
        self._escape: str | None = None  # None, "" after a backslash, or the \\u hex digits so far
        self._high: int | None = None  # a pending high surrogate
        self._name: str | None = None
        self._held: list[str] = []
        self._capturing = False

    @property
    def name(self) -> str | None:
        """The top-level ``name`` once it has streamed in full."""
        return self._name

    def feed(self, delta: str) -> str:
        out: list[str] = []
        for ch in delta:
            if self._in_string:
                self._string_char(ch, out)
            else:
                self._structural(ch)
            if self._held and self._name is not None:
                if self._name == FINAL_ANSWER:
                    out.extend(self._held)
                self._held = []
        return "".join(out)

    # -- strings
    def _string_char(self, ch: str, out: list[str]) -> None:
        if self._escape == "" and ch != "u":
            self._escape = None
            self._emit(_ESCAPES.get(ch, ch), out)
        elif self._escape is not None:
            self._escape += ch
            if len(self._escape) == 5:
                code = int(self._escape[1:], 16) if all(c in _HEX for c in self._escape[1:]) else 0xFFFD
                self._escape = None
                self._codepoint(code, out)
        elif ch == "\\":
            self._escape = ""
        elif ch == '"':
            self._end_string()
        else:
            self._emit(ch, out)

    def _codepoint(self, code: int, out: list[str]) -> None:
        if 0xD800 <= code < 0xDC00:
            self._high = code
            return
        if 0xDC00 <= code < 0xE000 and self._high is not None:
            code = 0x10000 + ((self._high - 0xD800) << 10) + (code - 0xDC00)
        self._high = None
        self._emit(chr(code) if not 0xD800 <= code < 0xE000 else "\ufffd", out)

    def _emit(self, s: str, out: list[str]) -> None:
        if self._high is not None:  # a lone high surrogate
            self._high = None
            self._emit("\ufffd", out)
        if self._string_is_key or self._path() == ["name"]:
            self._buf.append(s)
        elif self._capturing:
            if self._name == FINAL_ANSWER:
                out.append(s)
            elif self._name is None:
                self._held.append(s)

    def _path(self) -> list[Any]:
        return [frame[1] for frame in self._stack]

    def _end_string(self) -> None:
        self._in_string, text, self._buf = False, "".join(self._buf), []
        if self._string_is_key:
            if self._stack:
                self._stack[-1][1] = text
                self._stack[-1][2] = "colon"
            return
        if self._path() == ["name"] and self._name is None:
            self._name = text
        self._capturing = False
        self._value_done()

    # -- structure
    def _structural(self, ch: str) -> None:
        if ch in " \t\r\n":
            return
        top = self._stack[-1] if self._stack else None
        state = top[2] if top is not None else "value"
        if top is not None and (state in ("key", "comma", "colon", "after") or ch == ","):
            if ch == "," and state in ("comma", "after", "value"):  # "value": a number or literal ended
                if top[0] == "arr":
                    top[1] += 1
                top[2] = "key" if top[0] == "obj" else "value"
            elif ch == ":" and state == "colon":
                top[2] = "value"
            elif ch == '"' and state == "key":
                self._start_string(is_key=True)
            elif ch in "}]" and state != "colon":
                self._close()
            return
        if ch in "}]":
            self._close()
        elif ch == "{":
            self._stack.append(["obj", None, "key"])
        elif ch == "[":
            self._stack.append(["arr", 0, "value"])
        elif ch == '"':
            self._start_string(is_key=False)
        # digits and literals need no tracking: the "," or "}" after them moves the state on

    def _start_string(self, *, is_key: bool) -> None:
        self._in_string, self._string_is_key, self._buf, self._escape, self._high = True, is_key, [], None, None
        self._capturing = not is_key and self._path() == ["arguments", "text"]

    def _close(self) -> None:
        if self._stack:
            self._stack.pop()
        self._value_done()

    def _value_done(self) -> None:
        if self._stack:
            self._stack[-1][2] = "comma" if self._stack[-1][0] == "obj" else "after"
