"""A session's turn control: the one lock, the one steer queue and the one stop signal, shared by the agent and
whatever drives it (the server's runtime). See docs/loop.md §1.4 and §5 and docs/architecture.md."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar

import anyio

log = logging.getLogger("agentls.loop")

_HELD: ContextVar[tuple[object, ...]] = ContextVar("agentls_turn_holds", default=())


class TurnControl:
    """What other tasks may do to a session while its turn runs (``steer``, ``interrupt``), and the lock that
    keeps turns, undo and manual compression from overlapping.

    A caller that runs several turns in a row (the runtime: a prompt and its follow-ups) ``hold``s the lock
    across them; the agent's own ``locked()`` then lets the holder's tasks in. While held, the stop signal and
    the steer queue belong to the hold: an interrupt stops the running turn and the ones after it, and steers
    the last turn did not take stay queued for the holder."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self._running = False
        self._stop = False
        self._scope: anyio.CancelScope | None = None
        self._steers: list[str] = []
        self._hold: object | None = None
        self._stop_waiters: set[asyncio.Future[None]] = set()

    @property
    def running(self) -> bool:
        """A core turn is in progress."""
        return self._running

    @property
    def held(self) -> bool:
        return self._hold is not None

    @property
    def interrupt_requested(self) -> bool:
        return self._stop

    # ----- the lock ---------------------------------------------------------------------------
    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Take the lock for several turns; tasks started inside (a core turn's task) pass ``locked()``. Steers
    still queued when it ends stay: the holder decides (``take_steer``, ``drop_steers``)."""
        async with self.lock:
            token = object()
            self._hold, self._stop = token, False
            reset = _HELD.set((*_HELD.get(), token))
            try:
                yield
            finally:
                _HELD.reset(reset)
                self._hold, self._stop = None, False

    @asynccontextmanager
    async def locked(self) -> AsyncIterator[None]:
        """The lock, unless the caller runs inside this control's ``hold``."""
        if self._hold is not None and self._hold in _HELD.get():
            yield
            return
        async with self.lock:
            yield

    # ----- one core turn ----------------------------------------------------------------------
    def begin(self) -> None:
        self._running = True
        if self._hold is None:
            self._stop = False

    def end(self) -> None:
        """The core turn is over. Without a hold, steers still queued belong to it (it raised before it could
        hand them back as ``pending_steer``: cancelled, or refused): they are dropped, never delivered to a
        later turn. Under a hold they stay for the holder."""
        self._running = False
        if self._hold is None:
            self._stop = False
            self.drop_steers()

    # ----- steers -----------------------------------------------------------------------------
    def steer(self, text: str, *, queue_idle: bool = False) -> bool:
        """Queue ``text`` for delivery after the current tool round. False when the text is blank, or when no
        turn is running or held (``queue_idle``: the caller will run it as a follow-up turn anyway)."""
        if not text.strip() or not (self._running or self._hold is not None or queue_idle):
            return False
        self._steers.append(text)
        return True

    @property
    def steer_pending(self) -> bool:
        """A steer waits for the next boundary (the agent's own steps for a small model stop for it)."""
        return bool(self._steers)

    def take_steer(self) -> str | None:
        """Every queued steer, joined, and the queue emptied; None when there is none."""
        if not self._steers:
            return None
        text = "\n\n".join(self._steers)
        self._steers.clear()
        return text

    def drop_steers(self) -> None:
        if self._steers:
            log.warning("%d steer(s) dropped: the turn they were sent to ended without taking them", len(self._steers))
            self._steers.clear()

    # ----- the stop signal --------------------------------------------------------------------
    def interrupt(self) -> bool:
        """Stop the running turn at the next safe boundary (aborting a model call or tools at once), and under a
        hold the turns after it too. Resolves every ``when_stopped`` future. False when nothing runs."""
        if not (self._running or self._hold is not None):
            return False
        self._stop = True
        if self._scope is not None:
            self._scope.cancel()
        for waiter in list(self._stop_waiters):
            if not waiter.done():
                waiter.set_result(None)
        return True

    def when_stopped(self) -> asyncio.Future[None]:
        """A future that resolves at the next stop (already resolved while one is in effect): a permission
        prompt pending in the editor counts as cancelled at once, so a client that never answers cannot hang
        the turn."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._stop:
            fut.set_result(None)
        else:
            self._stop_waiters.add(fut)
            fut.add_done_callback(self._stop_waiters.discard)
        return fut

    @contextmanager
    def interruptible(self) -> Iterator[anyio.CancelScope]:
        """A scope that ``interrupt`` cancels (already cancelled when an interrupt came first)."""
        scope = anyio.CancelScope()
        previous, self._scope = self._scope, scope
        if self._stop:
            scope.cancel()
        try:
            with scope:
                yield scope
        finally:
            self._scope = previous
