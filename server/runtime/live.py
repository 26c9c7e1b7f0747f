"""One live session of a server process: its agent (once a model resolves) and its turn bookkeeping."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .notices import Notice

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.agent.mcp.manager import McpManager
    from agentls.agent.result import TurnResult


class TurnControl:
    """Cancellation shared by a session's turns and its host.

    ``epoch`` counts cancels (ACP ``session/cancel``, closing the session): a request that saw an older
    epoch is cancelled, whether its turn was running or still waiting. ``stop()`` (an interrupt, and every
    cancel) resolves the waiters at once: a permission request pending in the editor counts as cancelled
    without waiting for the editor's own answer, so a client that never answers cannot hang the turn.
    """

    def __init__(self) -> None:
        self.epoch = 0
        self.stopping = False
        self._waiters: set[asyncio.Future[None]] = set()

    def cancel(self) -> None:
        self.epoch += 1
        self.stop()

    def stop(self) -> None:
        self.stopping = True
        for waiter in list(self._waiters):
            if not waiter.done():
                waiter.set_result(None)

    def begin_turn(self) -> None:
        self.stopping = False

    def waiter(self) -> asyncio.Future[None]:
        """A future that resolves at the next stop (already resolved while one is in effect)."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.stopping:
            fut.set_result(None)
        else:
            self._waiters.add(fut)
            fut.add_done_callback(self._waiters.discard)
        return fut


@dataclass(eq=False)
class RunState:
    """The request whose turns hold the session right now."""

    stopped: bool = False  # interrupted: no follow-up turn starts


@dataclass(eq=False)
class LiveSession:
    session_id: str
    cwd: Path
    system_message: str | None = None
    agent: AIAgent | None = None  # None until a model resolves (see ``no_model``)
    no_model: str | None = None  # why there is no agent yet (the two ways forward)
    mode: str = "ask"  # the approval mode; the agent's policy follows it once the agent exists
    models: list[str] = field(default_factory=list)  # the model choices: configured, fallbacks, picked
    notices: list[Notice] = field(default_factory=list)  # for the user, not shown yet
    mcp_servers: list[dict[str, Any]] = field(default_factory=list)  # the session's own MCP servers, as sent
    mcp_source: str = "session/new"  # where they came from, for messages
    mcp: McpManager | None = None  # its running MCP servers (server/runtime/mcp.py), once it has an agent
    control: TurnControl = field(default_factory=TurnControl)
    turn_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    inflight: int = 0  # requests running turns or waiting for their turn, and background turns
    current: RunState | None = None
    core_task: asyncio.Task[TurnResult] | None = None
    queued_steers: list[str] = field(default_factory=list)  # steers no running core turn could take
    background: set[asyncio.Task[Any]] = field(default_factory=set)
    closed: bool = False
    extra_roots: tuple[Path, ...] = ()  # more workspace roots (ACP additionalDirectories), checked by paths.extra_root

    @property
    def busy(self) -> bool:
        return self.inflight > 0

    def take_steers(self) -> str | None:
        """The queued steers as one message (None when there are none); the queue is emptied."""
        text, self.queued_steers = "\n\n".join(self.queued_steers), []
        return text or None
