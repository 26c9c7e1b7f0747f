"""One ACP session's state: its core agent (once a model resolves), its turn bookkeeping and cancellation."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.agent.result import TurnResult
    from agentls.server.acp.updates import UpdateSink


class TurnControl:
    """Cancellation shared by the session's turns and its host.

    ``epoch`` counts ``session/cancel``s: a prompt that saw an older epoch is cancelled, whether it was
    running or still waiting for its turn. Pending permission requests resolve as cancelled at once; the
    client's own answer is not awaited (a client that ignores the cancel cannot hang the turn).
    """

    def __init__(self) -> None:
        self.epoch = 0
        self.cancelling = False
        self._waiters: set[asyncio.Future[None]] = set()

    def cancel(self) -> None:
        self.epoch += 1
        self.cancelling = True
        for waiter in list(self._waiters):
            if not waiter.done():
                waiter.set_result(None)

    def begin_turn(self) -> None:
        self.cancelling = False

    def waiter(self) -> asyncio.Future[None]:
        """A future that resolves on the next cancel (already resolved while one is in effect)."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.cancelling:
            fut.set_result(None)
        else:
            self._waiters.add(fut)
            fut.add_done_callback(self._waiters.discard)
        return fut


@dataclass
class AcpSession:
    session_id: str
    cwd: Path
    sink: UpdateSink
    mcp_servers: list[dict[str, Any]] = field(default_factory=list)
    agent: AIAgent | None = None
    mode: str = "ask"  # mirrors agent.policy.mode; kept here until the agent exists
    models: list[str] = field(default_factory=list)  # the model select's values
    notice: str | None = None  # shown once before the first turn (the local-model notice)
    control: TurnControl = field(default_factory=TurnControl)
    turn_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    turn_task: asyncio.Task[TurnResult] | None = None
    inflight: int = 0  # prompts and steer-started turns, running or waiting
    queued_steers: list[str] = field(default_factory=list)
    background: set[asyncio.Task[Any]] = field(default_factory=set)
    closed: bool = False

    @property
    def busy(self) -> bool:
        return self.inflight > 0

    def take_steers(self) -> str | None:
        if not self.queued_steers:
            return None
        text = "\n\n".join(self.queued_steers)
        self.queued_steers.clear()
        return text
