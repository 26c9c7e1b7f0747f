"""One logical model call: the provider awaited directly, with classified retries and backoff,
compression when the context overflows, and the fallback models when the primary cannot answer."""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from . import events
from .config import Settings
from .endpoints import Endpoints
from .profile import ModelProfile
from .providers.base import ProviderRequest, ProviderResponse, ToolSchema
from .providers.errors import ProviderError
from .pricing import cost_of, price_of
from .shown_message import ShownMessage
from .types import Message, Usage, add_usage, empty_usage, text_of
from .updates import UpdateSender

log = logging.getLogger("agentls.loop")

MAX_RETRY_AFTER = 60.0  # a server asking for a longer wait is treated as not retryable now
AUX_SYSTEM = "You write faithful, structured summaries of coding sessions for another engineer to continue from."


def backoff_delay(attempt: int, base: float, cap: float, retry_after: float | None,
                  rng: random.Random | None = None) -> float:
    """``min(base * 2^(attempt-1), cap)`` plus jitter in ``[0, delay/2]``; ``Retry-After`` wins when given."""
    if retry_after is not None:
        return retry_after
    delay = min(base * 2.0 ** (attempt - 1), cap)
    jitter: float = (rng or random).uniform(0, delay / 2)
    return delay + jitter


@dataclass(frozen=True)
class Prompt:
    system: str
    messages: Sequence[Message]  # without the system message
    tools: Sequence[ToolSchema] = ()
    tool_choice: str | None = None  # "none", "required", "text" or None (ProviderRequest.tool_choice)
    paths: Sequence[str] | None = None  # tool_mode json: the workspace's files, for the grammar (never text)
    path_tools: Sequence[str] = ()  # the tools whose path ``paths`` constrains
    held_back: Sequence[str] = ()  # tool_mode json: tools the grammar leaves out this step
    temperature: float | None = None  # this call's own (a resample); None: the configured one
    # The session's transcript (the context compression watches), or a question of its own (a small model's plain
    # rewrite or answer: loop/focused.py, loop/plain_answer.py), whose size says nothing of the transcript's
    transcript: bool = True


@dataclass
class CallState:
    """What one turn's calls share: the endpoint fallen back to (kept for the rest of the turn), counters."""

    fallback_index: int = 0  # 0: the primary model; n: fallback n
    api_calls: int = 0
    usage: Usage = field(default_factory=empty_usage)


Overflow = Callable[[], Awaitable[bool]]  # compress hard; True when the transcript got smaller


class ModelCaller:
    def __init__(self, endpoints: Endpoints, updates: UpdateSender, settings: Settings, profile: ModelProfile) -> None:
        self.endpoints = endpoints
        self.settings = settings
        # unset, the profile's (a local model does not sample and stops early)
        self.max_tokens = profile.max_tokens if settings.max_tokens is None else settings.max_tokens
        self.temperature = profile.temperature if settings.temperature is None else settings.temperature
        self.last_prompt_tokens: int | None = None  # the provider's count for the last request of the transcript
        self.last_prompt_messages = 0  # ... and how many messages that request sent
        # The context meter's figure after a plain question (not the transcript): the compactor's ``pressure``
        self.context_used: Callable[[], int] | None = None
        self.cost: float | None = None  # the session's model calls so far, in USD, when the price is known
        self.wire_cache: dict[int, Any] = {}  # encoded messages, reused between calls
        self._updates = updates

    async def call(self, prompt: Callable[[], Prompt], state: CallState, *, purpose: str = "turn",
                   stream_to_user: bool = True, on_overflow: Overflow | None = None) -> ProviderResponse:
        """``prompt`` is built again for each attempt (a compression changes it). Raises ProviderError when
        every recovery is spent."""
        settings = self.settings
        attempt = 0
        compressed = False
        shown = ShownMessage(self._updates.send)  # what the editor has of this call, kept across attempts
        while True:
            shown.restart()
            provider, model = await self.endpoints.provider_for(state.fallback_index)
            p = prompt()
            request = ProviderRequest(model=model, system=p.system, messages=p.messages, tools=p.tools,
                                      stream=settings.stream, max_tokens=self.max_tokens,
                                      temperature=self.temperature if p.temperature is None else p.temperature,
                                      cache=self.wire_cache, purpose=purpose,
                                      tool_choice=p.tool_choice, paths=p.paths, path_tools=p.path_tools,
                                      held_back=p.held_back)
            state.api_calls += 1
            try:
                response = await provider.complete(request, shown.sink if stream_to_user else None)
            except ProviderError as exc:
                log.warning("provider call failed (%s, attempt %d, model %s): %s", exc.category, attempt + 1, model,
                            exc)
                hints = exc.hints
                if hints.compress and not compressed and on_overflow is not None:
                    compressed = True
                    if await on_overflow():
                        continue
                wait_ok = exc.retry_after is None or exc.retry_after <= MAX_RETRY_AFTER
                # ours, or too long with nothing (more) to compress: the same request again cannot succeed
                rejected = exc.category == "format_error" and exc.status is not None or exc.category == "context_overflow"
                if hints.retryable and wait_ok and not rejected and attempt < settings.max_retries:
                    attempt += 1
                    delay = backoff_delay(attempt, settings.retry_base_delay, settings.retry_max_delay,
                                          exc.retry_after)
                    log.info("retrying in %.2fs", delay)
                    await anyio.sleep(delay)
                    continue
                if hints.fallback and state.fallback_index < self.endpoints.fallback_count:
                    state.fallback_index += 1
                    attempt = 0
                    compressed = False
                    log.warning("falling back to model %s", self.endpoints.fallback_name(state.fallback_index))
                    continue
                raise
            if stream_to_user:
                if not request.stream:  # a non-streamed answer still reaches the editor, in one piece
                    await shown.feed("reasoning", str(response.message.get("reasoning") or ""))
                    await shown.feed("text", text_of(response.message))
                await shown.finish()
                response.message.setdefault("meta", {})["messageId"] = shown.message_id  # a fork point
            await self._account(response, state, len(p.messages) if p.transcript else None)
            return response

    async def _account(self, response: ProviderResponse, state: CallState, sent: int | None) -> None:
        """Usage, and for a request of the transcript (``sent`` messages) the context meter: only such a request's
        size tells the compressor how full the context is (a plain question's made it skip a pass that was due,
        and the next request overflowed)."""
        usage = response.usage
        add_usage(state.usage, usage)
        if sent is not None:
            self.last_prompt_tokens, self.last_prompt_messages = usage["prompt_tokens"] or None, sent
            used = usage["prompt_tokens"] + usage["completion_tokens"]
        else:  # a plain question's size is not the context's: the meter shows the transcript's
            used = self.context_used() if self.context_used is not None else self.last_prompt_tokens or 0
        price = price_of(self.endpoints.model, self.settings.prices)
        if price is not None:
            self.cost = (self.cost or 0.0) + cost_of(usage, price)
        if used:
            await self._updates.send(events.usage_update(used, self.endpoints.context_window, self.cost,
                                                         state.usage))

    async def aux_call(self, prompt: str, *, purpose: str, max_tokens: int | None = None) -> str:
        """One tools-free, non-streamed call to the auxiliary model (the main model unless configured)."""
        provider, model = await self.endpoints.provider_for(0, self.settings.aux_model or self.endpoints.model)
        response = await provider.complete(ProviderRequest(
            model=model, system=AUX_SYSTEM, messages=[{"role": "user", "content": prompt}], tools=[],
            stream=False, max_tokens=max_tokens, purpose=purpose))
        return text_of(response.message)
