"""Running turns: one after another per session, sessions in parallel, each with progress.

A turn answered to a request runs in the request's own task, so ``$/cancelRequest`` cancels it: the
core persists the partial transcript and re-raises, and pygls answers -32800. Turns the server starts
itself (a steer that arrived between turns, a ``pendingSteer`` the core handed back) run as
background tasks; all of them end, and persist, when the client goes away.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from agentls.agent.result import TurnResult
from agentls.server.lsp.progress import TurnProgress, first_words, outcome

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.server.lsp.server import AgentServer

log = logging.getLogger("agentls.lsp.turns")

SHUTDOWN_GRACE = 15.0


def wire_result(result: TurnResult) -> dict[str, Any]:
    """The core's result as the ``agent/turn`` result (camelCase, no transcript)."""
    usage = result.usage
    out: dict[str, Any] = {
        "sessionId": result.session_id,
        "finalResponse": result.final_response,
        "completed": result.completed,
        "apiCalls": result.api_calls,
        "exitReason": result.exit_reason.value,
        "interrupted": result.interrupted,
        "failed": result.failed,
        "partial": result.partial,
        "usage": {"promptTokens": usage["prompt_tokens"], "completionTokens": usage["completion_tokens"],
                  "cachedTokens": usage["cached_tokens"]},
    }
    if result.error is not None:
        out["error"] = {"category": result.error["category"], "message": result.error["message"]}
    if result.pending_steer:
        out["pendingSteer"] = result.pending_steer
    return out


def answer_text(result: TurnResult) -> tuple[types.MessageType, str]:
    """What ``window/showMessage`` says about a finished turn."""
    if result.failed and result.error is not None:
        error = result.error
        return types.MessageType.Error, f"agentls: the turn failed ({error['category']}): {error['message']}"
    final = result.final_response
    if result.interrupted:
        return types.MessageType.Warning, "agentls: the turn was interrupted" + (f". {final}" if final else "")
    if final:
        return types.MessageType.Info, f"agentls: {final}"
    return types.MessageType.Warning, f"agentls: the turn ended without an answer ({result.exit_reason.value})"


class TurnRunner:
    def __init__(self, ls: AgentServer) -> None:
        self._ls = ls
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def _lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())

    def busy(self, session_id: str) -> bool:
        return self._lock(session_id).locked()

    def holding(self, session_id: str) -> asyncio.Lock:
        """``async with runner.holding(sid)``: no turn of the session runs inside."""
        return self._lock(session_id)

    async def run(self, agent: AIAgent, prompt: Any, *, task_id: str | None = None,
                  runtime_context: str | None = None, token: int | str | None = None,
                  show_answer: bool = False, echo_prompt: bool = False) -> dict[str, Any]:
        """One turn, queued behind the session's earlier turns; the wire result."""
        from agentls.server.lsp.host import LspHost

        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            async with self._lock(agent.session_id):
                progress = TurnProgress(self._ls, first_words(prompt), token, on_cancel=agent.interrupt)
                host = agent.host if isinstance(agent.host, LspHost) else None
                await progress.start()
                if host is not None:
                    host.progress = progress
                try:
                    result = await agent.run_conversation(prompt, task_id=task_id, runtime_context=runtime_context,
                                                          echo_prompt=echo_prompt)
                except asyncio.CancelledError:
                    progress.end("cancelled")
                    raise
                except Exception as exc:
                    progress.end(f"failed: {exc}")
                    raise
                finally:
                    if host is not None:
                        host.progress = None
                progress.end(outcome(result))
        finally:
            if task is not None:
                self._tasks.discard(task)
        if result.cleanup_errors:
            log.warning("turn cleanup errors: %s", result.cleanup_errors)
        if result.pending_steer and not result.interrupted:  # after an interrupt the user said stop
            self.background(agent, result.pending_steer)
        if show_answer:
            kind, message = answer_text(result)
            self._ls.show(kind, message)
            self._ls.log(message)  # the whole answer, where a status line cuts it (Helix's :log-open)
        return wire_result(result)

    def background(self, agent: AIAgent, prompt: str) -> None:
        """A turn nobody waits for: its answer reaches the client as updates, else with showMessage."""
        task = asyncio.ensure_future(self._background(agent, prompt))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _background(self, agent: AIAgent, prompt: str) -> None:
        try:
            await self.run(agent, prompt, show_answer=not self._ls.features.updates, echo_prompt=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("a background turn failed")
            self._ls.show(types.MessageType.Error, f"agentls: a turn failed: {exc}")

    async def aclose(self) -> None:
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE)
            if pending:
                log.warning("%d turn(s) did not end within %g s", len(pending), SHUTDOWN_GRACE)
