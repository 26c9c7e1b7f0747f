"""The provider call: awaited directly, with classified retries, compression on overflow, and fallbacks."""

from __future__ import annotations

import logging
import random
from typing import TYPE_CHECKING

import anyio

from agentls.agent import events
from agentls.agent.loop import request
from agentls.agent.loop.state import TurnState
from agentls.agent.providers.base import ProviderResponse, StreamSink
from agentls.agent.providers.errors import ProviderError
from agentls.agent.types import Message, add_usage, text_of

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent

log = logging.getLogger("agentls.loop")

MAX_RETRY_AFTER = 60.0  # a server asking for a longer wait is treated as not retryable now


def backoff_delay(attempt: int, base: float, cap: float, retry_after: float | None,
                  rng: random.Random | None = None) -> float:
    """``min(base * 2^(attempt-1), cap)`` plus jitter in ``[0, delay/2]``; ``Retry-After`` wins when given."""
    if retry_after is not None:
        return retry_after
    delay = min(base * 2.0 ** (attempt - 1), cap)
    jitter: float = (rng or random).uniform(0, delay / 2)
    return delay + jitter


async def call_model(agent: AIAgent, turn: TurnState, *, tools: bool = True, extra_user: str | None = None,
                     extra_messages: list[Message] | None = None, purpose: str = "turn",
                     stream_to_user: bool = True) -> ProviderResponse:
    """One logical model call. Raises ProviderError when every recovery is spent."""
    attempt = 0
    compressed = False
    sink = response_sink(agent) if stream_to_user else None
    paths = await agent.grammar_paths() if tools else None
    while True:
        provider, model = await agent._provider_for(turn.fallback_index)
        req = request.build(agent, turn, model=model, tools=tools, extra_user=extra_user,
                            extra_messages=extra_messages, purpose=purpose, paths=paths)
        turn.api_calls += 1
        try:
            response = await provider.complete(req, sink)
        except ProviderError as exc:
            log.warning("provider call failed (%s, attempt %d, model %s): %s", exc.category, attempt + 1, model, exc)
            hints = exc.hints
            if hints.compress and not compressed and purpose == "turn":
                compressed = True
                if await agent._compress_for_overflow(turn):
                    continue
            wait_ok = exc.retry_after is None or exc.retry_after <= MAX_RETRY_AFTER
            rejected = exc.category == "format_error" and exc.status is not None  # our request: retrying won't help
            if hints.retryable and wait_ok and not rejected and attempt < agent.max_retries:
                attempt += 1
                delay = backoff_delay(attempt, agent.retry_base_delay, agent.retry_max_delay, exc.retry_after)
                log.info("retrying in %.2fs", delay)
                await anyio.sleep(delay)
                continue
            if hints.fallback and turn.fallback_index < len(agent.fallback_models):
                turn.fallback_index += 1
                attempt = 0
                compressed = False
                log.warning("falling back to model %s", agent.fallback_models[turn.fallback_index - 1])
                continue
            raise
        if stream_to_user and not req.stream:  # the editor still sees the answer, in one piece
            if response.message.get("reasoning"):
                await agent._emit(events.thought_chunk(str(response.message["reasoning"])))
            shown = text_of(response.message)
            if shown:
                await agent._emit(events.message_chunk(shown))
        add_usage(turn.usage, response.usage)
        agent.last_prompt_tokens = response.usage["prompt_tokens"] or None
        used = response.usage["prompt_tokens"] + response.usage["completion_tokens"]
        if used:
            await agent._emit(events.usage_update(used, agent.context_window))
        return response


def response_sink(agent: AIAgent) -> StreamSink:
    async def on_text(delta: str) -> None:
        await agent._emit(events.message_chunk(delta))

    async def on_reasoning(delta: str) -> None:
        await agent._emit(events.thought_chunk(delta))

    return StreamSink(on_text=on_text, on_reasoning=on_reasoning)
