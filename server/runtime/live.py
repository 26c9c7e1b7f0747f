"""One live session of a server process: its agent (once a model resolves), the core's ``TurnControl`` it
shares with that agent, and what the runtime counts on top (cancels, requests in flight). docs/architecture.md."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.agent.turn_control import TurnControl
from .notices import Notice

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.agent.mcp.manager import McpManager
    from agentls.agent.result import TurnResult


class Steer(Enum):
    INJECTED = "injected"  # the running turn takes it after its current tool round, or a follow-up runs it
    IDLE = "idle"  # nothing runs: the face decides
    FAILED = "failed"  # an empty text, or a closed session


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
    # The one lock, steer queue and stop signal, handed to the agent when it is built:
    control: TurnControl = field(default_factory=TurnControl)
    cancels: int = 0  # the cancel epoch: a request that saw fewer cancels than there are now is cancelled
    inflight: int = 0  # requests running turns or waiting for their turn, and background turns
    core_task: asyncio.Task[TurnResult] | None = None  # the core turn running now, in its own task
    background: set[asyncio.Task[Any]] = field(default_factory=set)  # turns started by a steer on an idle session
    closed: bool = False
    extra_roots: tuple[Path, ...] = ()  # more workspace roots (ACP additionalDirectories), checked by paths.extra_root

    @property
    def busy(self) -> bool:
        return self.inflight > 0

    def tasks(self) -> list[asyncio.Task[Any]]:
        """The turns' tasks still running (the core turn's, the background turns')."""
        return [t for t in (self.core_task, *self.background) if t is not None and not t.done()]

    def steer(self, text: str) -> Steer:
        """Into the running turn, or (while a request holds or waits for the session) for a follow-up turn."""
        if self.closed or not text.strip():
            return Steer.FAILED
        return Steer.INJECTED if self.control.steer(text, queue_idle=self.busy) else Steer.IDLE

    def interrupt(self) -> bool:
        """Stop the request whose turn runs now (no follow-up starts). False when none runs."""
        if not self.control.interrupt():
            return False
        task = self.core_task
        if task is not None and not task.done() and not self.control.running:
            task.cancel()  # the core turn has not started running yet
        return True

    def cancel(self) -> bool:
        """Cancel everything in flight (the queued requests too, and the steers); False on an idle session."""
        if not self.busy:
            return False
        self.cancels += 1
        self.control.drop_steers()
        self.interrupt()
        return True

    def close(self) -> None:
        """The session goes away (closed, or the client is gone): cancel everything, the running core turn's
        task too (the turn persists what it has and ends ``cancelled``). A hard cancel, not an interrupt: the
        connection's end must not wait for the turn's next safe point."""
        self.closed = True
        self.cancels += 1
        self.control.drop_steers()
        self.control.interrupt()
        for task in self.tasks():
            task.cancel()
