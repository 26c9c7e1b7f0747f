"""Saving the transcript during a turn: a failed save is tried once more, then logged and listed in
``cleanup_errors``; the turn goes on and the next save that works writes what is missing (docs/loop.md §4.4)."""

from __future__ import annotations

import logging

from .parts import TurnParts
from .state import TurnState

log = logging.getLogger("agentls.loop")


async def save(parts: TurnParts, turn: TurnState) -> bool:
    """Persist what is new; False when the store failed twice. Raises only cancellation."""
    try:
        await parts.conversation.persist()
        return True
    except Exception as exc:
        log.warning("saving the transcript failed (%s: %s); trying once more", type(exc).__name__, exc)
    try:
        await parts.conversation.persist()
        return True
    except Exception as exc:
        log.exception("saving the transcript failed again; it is kept in memory and saved at the next save")
        error = f"persist: {type(exc).__name__}: {exc}"
        if error not in turn.cleanup_errors:  # a store that stays broken is reported once, not every round
            turn.cleanup_errors.append(error)
        return False
