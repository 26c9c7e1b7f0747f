"""Saving the transcript during a turn. A store that fails does not end the turn (docs/loop.md §4.4): the save is
tried once more, then the failure is logged and reported in the result's ``cleanup_errors``, the transcript
stays in memory, and the next save writes it (rewriting the session's rows, so nothing is stored twice)."""

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
