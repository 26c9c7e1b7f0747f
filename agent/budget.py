"""An iteration budget that a parent agent can share with its subagents."""

from __future__ import annotations

import threading


class IterationBudget:
    """Counts provider calls. ``consume`` takes one if any remain; ``refund`` gives one back.

    Safe under concurrency (asyncio tasks and threads alike): every change happens under a lock.
    ``grace``: a turn that spends it gets one tools-free summary call (docs/loop.md §2.5); a subagent's view
    (``for_child``) has none: the child stops and returns what it has, and its parent makes the grace call.
    """

    grace = True

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"an iteration budget needs a limit of at least 1, got {limit}")
        self._limit = limit
        self._used = 0
        self._lock = threading.Lock()

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def used(self) -> int:
        return self._used

    @property
    def remaining(self) -> int:
        return self._limit - self._used

    def consume(self, n: int = 1) -> bool:
        with self._lock:
            if self._used + n > self._limit:
                return False
            self._used += n
            return True

    def refund(self, n: int = 1) -> None:
        with self._lock:
            self._used = max(0, self._used - n)

    def reset(self) -> None:
        with self._lock:
            self._used = 0

    def __repr__(self) -> str:
        return f"IterationBudget(used={self._used}, limit={self._limit})"


class ChildBudget(IterationBudget):
    """A subagent's view of its parent turn's budget: every call is taken from the parent's (docs/loop.md §9.9)."""

    grace = False

    def __init__(self, parent: IterationBudget) -> None:
        super().__init__(parent.limit)
        self.parent = parent

    @property
    def limit(self) -> int:
        return self.parent.limit

    @property
    def used(self) -> int:
        return self.parent.used

    @property
    def remaining(self) -> int:
        return self.parent.remaining

    def consume(self, n: int = 1) -> bool:
        return self.parent.consume(n)

    def refund(self, n: int = 1) -> None:
        self.parent.refund(n)

    def reset(self) -> None:
        """Never: a child's turn does not reset its parent's budget."""

    def __repr__(self) -> str:
        return f"ChildBudget({self.parent!r})"
