"""Compression and auxiliary-model calls for ``AIAgent`` (a mixin kept apart for size)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

import anyio

from agentls.agent import events
from agentls.agent.loop.state import TurnState
from agentls.agent.providers.base import ProviderRequest
from agentls.agent.types import Message, text_of

if TYPE_CHECKING:
    from agentls.agent.budget import IterationBudget
    from agentls.agent.context.compress import CompressionResult, Compressor
    from agentls.agent.providers.base import Provider
    from agentls.agent.tools.registry import ToolRegistry

log = logging.getLogger("agentls.compress")

SUMMARY_SYSTEM = "You write faithful, structured summaries of coding sessions for another engineer to continue from."


class CompressOps:
    messages: list[Message]
    system_prompt: str | None
    registry: ToolRegistry
    _fixed_key: tuple[int, int]
    _fixed: int
    compressor: Compressor
    budget: IterationBudget
    last_prompt_tokens: int | None
    aux_model: str | None
    model: str
    _running: bool
    _lock: asyncio.Lock
    _needs_rewrite: bool
    _pending_compress: list[tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]]

    async def _setup(self) -> None:
        raise NotImplementedError

    async def _emit(self, update: dict[str, Any]) -> None:
        raise NotImplementedError

    async def _persist(self, turn: TurnState | None = None, *, final: bool = False) -> None:
        raise NotImplementedError

    async def _provider_for(self, index: int, model: str | None = None) -> tuple[Provider, str]:
        raise NotImplementedError

    async def _aux_call(self, prompt: str, *, purpose: str, max_tokens: int | None = None) -> str:
        """One tools-free, non-streamed call to the auxiliary model (the main model unless configured)."""
        provider, model = await self._provider_for(0, self.aux_model or self.model)
        response = await provider.complete(ProviderRequest(
            model=model, system=SUMMARY_SYSTEM, messages=[{"role": "user", "content": prompt}], tools=[],
            stream=False, max_tokens=max_tokens, purpose=purpose))
        return text_of(response.message)

    async def _summarize(self, prompt: str) -> str:
        return await self._aux_call(prompt, purpose="summary")

    def _fixed_tokens(self) -> int:
        """The system prompt and tool schemas: sent with every request, outside the transcript."""
        from agentls.agent.context.tokens import estimate_text

        key = (len(self.system_prompt or ""), len(self.registry.schemas()))
        if getattr(self, "_fixed_key", None) != key:
            import json

            self._fixed_key = key
            self._fixed = estimate_text(self.system_prompt or "") + estimate_text(json.dumps(self.registry.schemas()))
        return self._fixed

    def _should_compress(self) -> bool:
        return bool(self.messages) and self.compressor.should_compress(
            self.messages, self.last_prompt_tokens, extra_tokens=self._fixed_tokens())

    async def _compress(self, turn: TurnState | None, *, automatic: bool = False, focus: str | None = None,
                        keep_last: int | None = None, preview: bool = False,
                        aggressive: bool = False) -> dict[str, Any] | None:
        """Compress now (the caller holds the turn). Reports ``compaction_update``; never raises but cancellation."""
        compaction_id = f"compaction-{uuid.uuid4().hex[:12]}"
        # A manual pass shows its progress; an automatic one reports only if it changed something.
        if not preview and not automatic:
            await self._emit(events.compaction_update(compaction_id, "in_progress"))
        try:
            res: CompressionResult = await self.compressor.compress(
                self.messages, summarize=self._summarize, focus=focus, keep_last=keep_last,
                aggressive=aggressive, preview=preview, automatic=automatic)
        except anyio.get_cancelled_exc_class():
            if not preview and not automatic:
                with anyio.CancelScope(shield=True):
                    await self._emit(events.compaction_update(compaction_id, "cancelled"))
            raise
        except Exception as exc:
            log.exception("compression failed")
            if not preview:
                await self._emit(events.compaction_update(compaction_id, "failed", meta={"error": str(exc)}))
            return None
        report = {"tokensBefore": res.tokens_before, "tokensAfter": res.tokens_after,
                  "messagesBefore": res.messages_before, "messagesAfter": res.messages_after}
        if preview:
            return {**report, "summary": res.summary}
        changed = res.messages_after != res.messages_before or res.messages != self.messages
        if changed:
            self.messages[:] = res.messages
            self._needs_rewrite = True
            self.last_prompt_tokens = None
            await self._persist(turn)
        elif automatic:
            return {**report, "summary": res.summary}
        await self._emit(events.compaction_update(compaction_id, "completed", summary=res.summary, meta=report))
        await self._emit(events.usage_update(res.tokens_after, self.compressor.context_window))
        return {**report, "summary": res.summary}

    async def _compress_for_overflow(self, turn: TurnState) -> bool:
        """After a context-overflow error: compress hard once. True when the transcript got smaller."""
        before = len(self.messages)
        out = await self._compress(turn, automatic=False, aggressive=True)
        return out is not None and (out["tokensAfter"] < out["tokensBefore"] or len(self.messages) < before)

    async def _run_pending_compressions(self, turn: TurnState) -> None:
        while self._pending_compress:
            kwargs, future = self._pending_compress.pop(0)
            try:
                out = await self._compress(turn, **kwargs)
            except BaseException as exc:
                if not future.done():
                    future.set_exception(exc)
                raise
            if not future.done():
                future.set_result(out or {"error": "compression failed"})

    async def compress(self, focus: str | None = None, keep_last: int | None = None, preview: bool = False,
                       aggressive: bool = False) -> dict[str, Any]:
        """Manual compression. While a turn runs it happens at the turn's next safe boundary."""
        kwargs = {"focus": focus, "keep_last": keep_last, "preview": preview, "aggressive": aggressive}
        if self._running:
            future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self._pending_compress.append((kwargs, future))
            return await future
        async with self._lock:
            await self._setup()
            out = await self._compress(None, **kwargs)  # type: ignore[arg-type]
            return out or {"error": "compression failed"}
