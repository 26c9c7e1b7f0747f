"""The model call of a round: interruptible, its failures and interrupts turned into the turn's exits."""

from __future__ import annotations

from . import request
from .exits import Interrupted, ModelFailed
from .parts import TurnParts
from .state import TurnState
from ..model_caller import Prompt
from ..providers.base import ProviderResponse
from ..providers.errors import ProviderError
from ..types import Message


async def call_model(parts: TurnParts, turn: TurnState, *, tools: bool = True, extra_user: str | None = None,
                     extra_messages: list[Message] | None = None, purpose: str = "turn",
                     temperature: float | None = None) -> ProviderResponse:
    """One logical model call (retries, compression on overflow and fallbacks happen inside). Raises
    ``Interrupted`` or ``ModelFailed``."""
    paths = await parts.views.grammar_paths() if tools else None

    def build() -> Prompt:
        return request.prompt(parts, turn, tools=tools, extra_user=extra_user, extra_messages=extra_messages,
                              paths=paths, temperature=temperature)

    overflow = parts.compactor.compress_for_overflow if purpose == "turn" else None
    response: ProviderResponse | None = None
    with parts.control.interruptible():
        try:
            response = await parts.caller.call(build, turn.calls, purpose=purpose, on_overflow=overflow)
        except ProviderError as exc:
            raise ModelFailed(exc) from exc
    if response is None:  # the scope was cancelled: interrupt()
        raise Interrupted()
    return response
