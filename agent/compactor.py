"""Compression of the session's transcript: automatic when the context fills up, hard once after an
overflow error, and manual (``AIAgent.compress``) at a turn's next safe boundary."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import TYPE_CHECKING, Any

import anyio

from . import events
from .context.anchor import last_user
from .conversation import Conversation
from .model_caller import ModelCaller
from .tools.registry import ToolRegistry
from .updates import UpdateSender

if TYPE_CHECKING:
    from .context.compress import CompressionResult, Compressor

log = logging.getLogger("agentls.compress")

Report = dict[str, Any]


AFTER_TURN: dict[str, Any] = {}  # a queued compression's answer when its turn ended first: run it now

class Compactor:
    def __init__(self, conversation: Conversation, caller: ModelCaller, updates: UpdateSender,
                 registry: ToolRegistry, threshold: float, use_model: bool = True) -> None:
        self.threshold = threshold
        self.use_model = use_model  # False: the summary is assembled from the messages (agent/context/summary.py)
        self._conversation = conversation
        self._caller = caller
        self._updates = updates
        self._registry = registry
        self._compressor: Compressor | None = None
        self._fixed: tuple[tuple[int, int], int] | None = None
        self._queued: list[tuple[dict[str, Any], asyncio.Future[Report]]] = []

    def open(self, context_window: int) -> None:
        from .context.compress import Compressor

        self._compressor = Compressor(context_window, threshold=self.threshold)

    @property
    def compressor(self) -> Compressor:
        assert self._compressor is not None, "Compactor.open() comes first"
        return self._compressor

    def _fixed_tokens(self) -> int:
        """The system prompt and tool schemas: sent with every request, outside the transcript."""
        from .context.tokens import estimate_text

        system = self._conversation.system_prompt or ""
        schemas = self._registry.schemas()
        key = (len(system), len(schemas))
        if self._fixed is None or self._fixed[0] != key:
            self._fixed = (key, estimate_text(system) + estimate_text(json.dumps(schemas)))
        return self._fixed[1]

    def pressure(self) -> int:
        """About how many tokens the next request of the transcript holds (the context meter): the provider's count
        of the last one, or the estimate of the transcript as it is now when that is more."""
        from .context.tokens import estimate_messages

        estimate = estimate_messages(self._conversation.messages) + self._fixed_tokens()
        return max(self._caller.last_prompt_tokens or 0, estimate)

    def due(self) -> bool:
        """Whether an automatic pass is due before the next model call."""
        messages = self._conversation.messages
        return bool(messages) and self.compressor.should_compress(
            messages, self._caller.last_prompt_tokens, extra_tokens=self._fixed_tokens(),
            sent=self._caller.last_prompt_messages)

    async def _summarize(self, prompt: str) -> str:
        return await self._caller.aux_call(prompt, purpose="summary")

    async def compress(self, *, automatic: bool = False, focus: str | None = None, keep_last: int | None = None,
                       preview: bool = False, aggressive: bool = False) -> Report | None:
        """Compress now (the caller holds the turn). Reports ``compaction_update``; returns None when it
        failed; raises only cancellation."""
        conversation, send = self._conversation, self._updates.send
        compaction_id = f"compaction-{uuid.uuid4().hex[:12]}"
        # A manual pass shows its progress; an automatic one reports only if it changed something.
        if not preview and not automatic:
            await send(events.compaction_update(compaction_id, "in_progress"))
        turn_user = conversation.turn_user  # pinned: never summarised away, and found again after the pass
        try:
            res: CompressionResult = await self.compressor.compress(
                conversation.messages, summarize=self._summarize if self.use_model else None, focus=focus, keep_last=keep_last,
                aggressive=aggressive, preview=preview, automatic=automatic, pin=turn_user)
        except anyio.get_cancelled_exc_class():
            if not preview and not automatic:
                with anyio.CancelScope(shield=True):
                    await send(events.compaction_update(compaction_id, "cancelled"))
            raise
        except Exception as exc:
            log.exception("compression failed")
            if not preview:
                await send(events.compaction_update(compaction_id, "failed", meta={"error": str(exc)}))
            return None
        report: Report = {"tokensBefore": res.tokens_before, "tokensAfter": res.tokens_after,
                          "messagesBefore": res.messages_before, "messagesAfter": res.messages_after}
        if preview:
            return {**report, "summary": res.summary}
        changed = res.messages_after != res.messages_before or res.messages != conversation.messages
        if changed:
            at = res.pinned
            if at is None and turn_user is not None:  # never expected: the request is pinned (logged there)
                at = last_user(res.messages)
            conversation.replace(res.messages, turn_user=at)
            self._caller.last_prompt_tokens = None
            try:
                await conversation.persist()
            except Exception:  # the compressed transcript is kept in memory and written at the next save
                log.exception("saving the compressed transcript failed")
        elif automatic:
            return {**report, "summary": res.summary}
        await send(events.compaction_update(compaction_id, "completed", summary=res.summary, meta=report))
        await send(events.usage_update(res.tokens_after, self.compressor.context_window))
        return {**report, "summary": res.summary}

    async def compress_for_overflow(self) -> bool:
        """After a context-overflow error: compress hard once. True when the transcript got smaller."""
        before = len(self._conversation.messages)
        out = await self.compress(aggressive=True)
        return out is not None and (out["tokensAfter"] < out["tokensBefore"] or
                                    len(self._conversation.messages) < before)

    def queue(self, **kwargs: Any) -> asyncio.Future[Report]:
        """A manual compression asked for while a turn runs: done at the turn's next safe boundary."""
        future: asyncio.Future[Report] = asyncio.get_running_loop().create_future()
        self._queued.append((kwargs, future))
        return future

    async def run_queued(self) -> None:
        while self._queued:
            kwargs, future = self._queued.pop(0)
            try:
                out = await self.compress(**kwargs)
            except BaseException as exc:
                if not future.done():
                    future.set_exception(exc)
                raise
            if not future.done():
                future.set_result(out or {"error": "compression failed"})

    def release_queued(self) -> None:
        """The turn ended (however) with compressions still queued: each is answered ``AFTER_TURN`` and its
        caller runs it on its own, instead of waiting for a boundary that will not come (or being cancelled
        with the turn: through a face, a request left unanswered)."""
        queued, self._queued = self._queued, []
        for _, future in queued:
            if not future.done():
                future.set_result(AFTER_TURN)
