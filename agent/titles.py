"""A session's title: the first line of its first prompt at once, then (optionally) a better one from the
auxiliary model in the background."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from . import events
from .conversation import Conversation
from .model_caller import ModelCaller
from .types import text_of
from .updates import UpdateSender

log = logging.getLogger("agentls.sessions")

TITLE_PROMPT = ("Write a title of at most six words for a coding session that starts with the request below. "
                "Answer with the title only, no quotes.\n\nRequest:\n")


class Titles:
    def __init__(self, mode: str, conversation: Conversation, caller: ModelCaller, updates: UpdateSender, *,
                 use_model: bool) -> None:
        self.mode = mode  # "model": the auxiliary model names the session; "prompt": the prompt's first line
        self._use_model = use_model and mode == "model"  # a CPU-bound local model has better things to do
        self._conversation = conversation
        self._caller = caller
        self._updates = updates
        self._tasks: set[asyncio.Task[None]] = set()

    async def after_turn(self, content: Any) -> None:
        """After the session's first turn: the quick title, stored and sent; the model's in the background."""
        if self._conversation.titled:
            return
        first = text_of({"role": "user", "content": content}).strip().splitlines()
        await self._apply((first[0] if first else "New session")[:80])
        if self._use_model:
            task = asyncio.ensure_future(self._from_model(content))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _apply(self, title: str) -> None:
        await self._conversation.set_title(title)
        await self._updates.send(events.session_info(title=title))

    async def _from_model(self, content: Any) -> None:
        """Failures keep the quick title."""
        try:
            answer = await self._caller.aux_call(TITLE_PROMPT + text_of({"role": "user", "content": content})[:2000],
                                                 purpose="title", max_tokens=32)
            cleaned = answer.strip().strip('"').splitlines()
            if cleaned and cleaned[0].strip():
                await self._apply(cleaned[0].strip()[:80])
        except Exception as exc:
            log.info("title generation failed, using the first line of the prompt: %s", exc)

    async def aclose(self) -> None:
        """Stop a title still being generated, and wait for it."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
