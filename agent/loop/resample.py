"""A small model that repeats a call that just failed is asked again, sampling, before the call runs.

At temperature 0 a 1.5B model that sent a failing call often sends it again word for word, whatever the
error said: the same context leads to the same tokens. When the reply repeats a call of the previous
round that failed (same tool, same arguments as parsed JSON), the model is asked again for this step at
``TEMPERATURE``, up to ``resamples`` times; only the reply that is kept joins the transcript. The loop
guard (agent/outcome.py) still stops a call that keeps coming back. As often as the profile says
(``ModelProfile.resamples``: a small model's, agent/profile.py).
"""

from __future__ import annotations

from ..outcome import key_of_call
from ..types import Message

TEMPERATURE = 0.7


def failed_calls(messages: list[Message]) -> set[str]:
    """The calls of the last tool round whose results were errors."""
    failed_ids: set[str] = set()
    i = len(messages) - 1
    while i >= 0 and messages[i].get("role") == "tool":
        if (messages[i].get("meta") or {}).get("error"):
            failed_ids.add(str(messages[i].get("tool_call_id")))
        i -= 1
    if i < 0 or not failed_ids or messages[i].get("role") != "assistant":
        return set()
    return {key_of_call(c) for c in messages[i].get("tool_calls") or [] if str(c.get("id")) in failed_ids}


def repeats_failure(messages: list[Message], reply: Message) -> bool:
    failed = failed_calls(messages)
    return bool(failed) and any(key_of_call(c) in failed for c in reply.get("tool_calls") or [])
