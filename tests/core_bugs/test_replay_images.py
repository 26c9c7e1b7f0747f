"""Core bug: ``replay_updates`` drops the images of user messages.

A prompt with an image is stored as a part list (``{"type": "image_url", ...}``); replaying the history
(``session/load``) yields only its text, and nothing at all for an image-only prompt, so the editor's
reloaded thread misses what the user sent. Expected: a ``user_message_chunk`` with an ACP image block.
The ACP face works around it (``server/acp/updates.py: history_updates``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.replay import replay_updates
from agent.types import Message


def test_an_image_prompt_is_replayed() -> None:
    messages: list[Message] = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
        {"role": "assistant", "content": "a picture"},
    ]
    updates = list(replay_updates(messages))
    user = [u for u in updates if u["sessionUpdate"] == "user_message_chunk"]
    assert any(u["content"].get("type") == "image" for u in user), updates
