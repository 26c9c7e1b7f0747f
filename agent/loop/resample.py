"""A small model that repeats a call that just failed is asked again, sampling, before the call runs.

At temperature 0 a 1.5B model that sent a failing call often sends it again word for word, whatever the
error said: the same context leads to the same tokens. When the reply repeats a call of the previous
round that failed (same tool, same arguments as parsed JSON), the model is asked again for this step at
``TEMPERATURE``, up to ``MAX_RESAMPLES`` times; only the reply that is kept joins the transcript. The loop
guard (agent/outcome.py) still stops a call that keeps coming back. Only for ``small_model``.
"""

from __future__ import annotations

import json
from typing import Any

from agentls.agent.types import Message, ToolCall

TEMPERATURE = 0.7
MAX_RESAMPLES = 2


def _key(call: ToolCall) -> tuple[str, str] | None:
    fn = call.get("function") or {}
    raw: Any = fn.get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return None
    return str(fn.get("name")), json.dumps(args, sort_keys=True, ensure_ascii=False)


def failed_calls(messages: list[Message]) -> set[tuple[str, str]]:
    """The calls of the last tool round whose results were errors."""
    failed_ids: set[str] = set()
    i = len(messages) - 1
    while i >= 0 and messages[i].get("role") == "tool":
        if (messages[i].get("meta") or {}).get("error"):
            failed_ids.add(str(messages[i].get("tool_call_id")))
        i -= 1
    if i < 0 or not failed_ids or messages[i].get("role") != "assistant":
        return set()
    keys = set()
    for call in messages[i].get("tool_calls") or []:
        key = _key(call)
        if key is not None and str(call.get("id")) in failed_ids:
            keys.add(key)
    return keys


def repeats_failure(messages: list[Message], reply: Message) -> bool:
    failed = failed_calls(messages)
    keys = [_key(c) for c in reply.get("tool_calls") or []]
    return bool(failed) and any(k is not None and k in failed for k in keys)
