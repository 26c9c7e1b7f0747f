"""How a turn ends. Every early end is one of these exceptions, raised where it happens and turned into
the turn's one ``Ending`` by ``rounds.run_rounds``; a text answer returns its ``Ending`` directly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..providers.errors import ProviderError
from ..result import ExitReason
from ..types import ErrorInfo


@dataclass(frozen=True)
class Ending:
    reason: ExitReason
    final_response: str | None = None
    error: ErrorInfo | None = None


class TurnExit(Exception):
    reason: ClassVar[ExitReason]

    def __init__(self, error: ProviderError | ErrorInfo | None = None, final_response: str | None = None) -> None:
        super().__init__(self.reason.value)
        if isinstance(error, ProviderError):
            error = {"category": error.category, "message": str(error)}
        self.error: ErrorInfo | None = error
        self.final_response = final_response

    def ending(self) -> Ending:
        return Ending(self.reason, self.final_response, self.error)


class Interrupted(TurnExit):
    """``interrupt()``: the user pressed stop."""

    reason = ExitReason.INTERRUPTED


class ModelFailed(TurnExit):
    """A model call failed after every retry, compression and fallback."""

    reason = ExitReason.FAILED


class BudgetExhausted(TurnExit):
    """The step budget ran out (after one tools-free summary call, whose answer or error it carries)."""

    reason = ExitReason.BUDGET_EXHAUSTED


class EmptyResponses(TurnExit):
    """The model kept answering with nothing."""

    reason = ExitReason.EMPTY_RESPONSE
