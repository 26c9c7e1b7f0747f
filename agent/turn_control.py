"""Turn control: one turn at a time, an interrupt as a cancel scope, steers queued for the next tool round."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import anyio

log = logging.getLogger("agentls.loop")


class TurnControl:
    """What other tasks may do to a session while its turn runs (``steer``, ``interrupt``), and the lock
    that keeps turns, undo and manual compression from overlapping."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self._running = False
        self._interrupt_requested = False
        self._scope: anyio.CancelScope | None = None
        self._steers: list[str] = []

    @property
    def running(self) -> bool:
        return self._running

    @property
    def interrupt_requested(self) -> bool:
        return self._interrupt_requested

    def begin(self) -> None:
        self._running = True
        self._interrupt_requested = False

    def end(self) -> None:
        """The turn is over. Steers still queued belong to it (it raised before it could hand them back as
        ``pending_steer``: cancelled, or refused): they are dropped, never delivered to a later turn."""
        self._running = False
        self._interrupt_requested = False
        if self._steers:
            log.warning("%d steer(s) dropped: the turn they were sent to ended without taking them", len(self._steers))
            self._steers.clear()

    def steer(self, text: str) -> bool:
        """Queue ``text`` for delivery after the current tool round. False when no turn is running."""
        if not self._running or not text.strip():
            return False
        self._steers.append(text)
        return True

    def take_steer(self) -> str | None:
        """Every queued steer, joined, and the queue emptied; None when there is none."""
        if not self._steers:
            return None
        text = "\n\n".join(self._steers)
        self._steers.clear()
        return text

    def interrupt(self) -> bool:
        """Stop the running turn at the next safe boundary (aborting a model call or tools at once)."""
        if not self._running:
            return False
        self._interrupt_requested = True
        if self._scope is not None:
            self._scope.cancel()
        return True

    @contextmanager
    def interruptible(self) -> Iterator[anyio.CancelScope]:
        """A scope that ``interrupt`` cancels (already cancelled when an interrupt came first)."""
        scope = anyio.CancelScope()
        previous, self._scope = self._scope, scope
        if self._interrupt_requested:
            scope.cancel()
        try:
            with scope:
                yield scope
        finally:
            self._scope = previous
