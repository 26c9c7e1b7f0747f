"""``$/progress`` around a turn: begin with the prompt's first words, a report per tool call (its title),
end with how the turn ended. ``window/workDoneProgress/cancel`` interrupts the turn.

Used when the client supports ``window.workDoneProgress`` (a server-created token) or sent a
``workDoneToken`` with the request (client-created).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from agentls.agent.result import ExitReason, TurnResult
from agentls.agent.types import SessionUpdate

if TYPE_CHECKING:
    from .server import AgentServer

log = logging.getLogger("agentls.lsp.progress")

TITLE = "agentls"
CREATE_TIMEOUT = 5.0  # the turn waits for this answer, so not the full clientTimeout


def first_words(prompt: Any, limit: int = 60) -> str:
    if isinstance(prompt, list):
        prompt = " ".join(str(b.get("text", "")) for b in prompt if isinstance(b, dict))
    text = " ".join(str(prompt).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def ending(result: TurnResult) -> str:
    """How the turn ended, in the few words the progress report ends with."""
    if result.completed:
        return "done"
    if result.interrupted:
        return "interrupted"
    if result.failed:
        return f"failed: {result.error['category'] if result.error else 'error'}"
    return {ExitReason.BUDGET_EXHAUSTED: "stopped: the step budget is used up",
            ExitReason.EMPTY_RESPONSE: "stopped: the model gave no answer"}.get(result.exit_reason, "stopped")


class TurnProgress:
    def __init__(self, ls: AgentServer, message: str, token: int | str | None = None,
                 on_cancel: Callable[[], Any] | None = None) -> None:
        self._ls = ls
        self._message = message
        self.token = token
        self._on_cancel = on_cancel
        self._active = False

    async def start(self) -> None:
        ls = self._ls
        if self.token is None:
            if not ls.features.work_done_progress:
                return
            token = f"agentls-{uuid.uuid4().hex[:12]}"
            try:
                await ls.call(types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.WorkDoneProgressCreateParams(token=token),
                              min(ls.options.client_timeout, CREATE_TIMEOUT))
            except (TimeoutError, JsonRpcException) as exc:
                log.info("no progress for this turn: %s", exc)
                return
            self.token = token
        self._active = True
        ls.work_done_progress.begin(self.token, types.WorkDoneProgressBegin(
            title=TITLE, message=self._message, cancellable=True))
        ls.work_done_progress.tokens[self.token].add_done_callback(self._cancelled)

    def _cancelled(self, future: Future[Any]) -> None:
        if future.cancelled() and self._active and self._on_cancel is not None:
            log.info("progress %s cancelled by the client: interrupting the turn", self.token)
            self._on_cancel()

    def report(self, message: str) -> None:
        if self._active and self.token is not None and not self._ls.channel.closed:
            self._ls.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=message))

    def on_update(self, update: SessionUpdate) -> None:
        if update.get("sessionUpdate") == "tool_call":
            self.report(f"{update.get('title') or update.get('kind') or 'working'}…")
        elif update.get("sessionUpdate") == "tool_call_update" and update.get("status") == "pending":
            self.report("waiting for your approval…")

    def end(self, message: str) -> None:
        if not self._active or self.token is None:
            return
        self._active = False
        future = self._ls.work_done_progress.tokens.pop(self.token, None)
        if future is not None and not future.done():
            future.set_result(None)
        if not self._ls.channel.closed:
            self._ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
