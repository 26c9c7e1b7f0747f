"""What a model call costs: a small table of list prices (USD per million tokens, input and output), overridden
by the ``prices`` setting (``["model=input/output", ...]``, the longest matching name prefix wins). A model with
no known price has no cost (docs/acp.md "Updates": ``usage_update.cost``)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from .types import Usage

log = logging.getLogger("agentls.pricing")

CURRENCY = "USD"
# Published list prices, per million tokens: (input, output). Cached input is counted as input.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4.1-nano": (0.10, 0.40), "gpt-4.1-mini": (0.40, 1.60), "gpt-4.1": (2.00, 8.00),
    "gpt-4o-mini": (0.15, 0.60), "gpt-4o": (2.50, 10.00),
    "claude-3-5-haiku": (0.80, 4.00), "claude-sonnet-4": (3.00, 15.00), "claude-opus-4": (15.00, 75.00),
}


def parse(entries: Iterable[str]) -> dict[str, tuple[float, float]]:
    """The ``prices`` setting's entries; a malformed one is logged and left out."""
    out: dict[str, tuple[float, float]] = {}
    for entry in entries:
        name, _, rates = entry.partition("=")
        given, _, taken = rates.partition("/")
        try:
            prices = (float(given), float(taken))
        except ValueError:
            log.warning("prices: %r is not model=input/output (USD per million tokens); it is ignored", entry)
            continue
        if name.strip() and min(prices) >= 0:
            out[name.strip()] = prices
    return out


def price_of(model: str, overrides: Iterable[str] = ()) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for ``model`` (a provider prefix such as ``openai/`` ignored)."""
    table = {**PRICES, **parse(overrides)}
    name = model.rsplit("/", 1)[-1]
    matches = [key for key in table if name.startswith(key) or model.startswith(key)]
    return table[max(matches, key=len)] if matches else None


def cost_of(usage: Usage, price: tuple[float, float]) -> float:
    return (usage["prompt_tokens"] * price[0] + usage["completion_tokens"] * price[1]) / 1_000_000
