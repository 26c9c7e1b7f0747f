"""Replaying a stored transcript (session load) gives the updates the editor saw, images included."""

from __future__ import annotations

from agentls.agent.replay import replay_updates
from agentls.agent.types import Message


def test_an_image_prompt_is_replayed() -> None:
    messages: list[Message] = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
        {"role": "assistant", "content": "a picture"},
    ]
    updates = list(replay_updates(messages))
    user = [u for u in updates if u["sessionUpdate"] == "user_message_chunk"]
    assert any(u["content"].get("type") == "image" for u in user), updates


def test_placeholder_answers_are_not_replayed() -> None:
    messages: list[Message] = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "(no answer: the user interrupted this turn)", "meta": {"placeholder": True}},
        {"role": "user", "content": "second"},
    ]
    kinds = [u["sessionUpdate"] for u in replay_updates(messages)]
    assert kinds == ["user_message_chunk", "user_message_chunk"]
