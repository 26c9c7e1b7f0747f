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

from agentls.server.lsp.progress import TurnProgress, first_words, outcome

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from agentls.server.lsp.server import AgentServer

log = logging.getLogger("agentls.lsp.turns")

SHUTDOWN_GRACE = 15.0


def wire_result(result: dict[str, Any]) -> dict[str, Any]:
    """The core's result dict as the ``agent/turn`` result (camelCase, no transcript)."""
    usage = result.get("usage") or {}
    out: dict[str, Any] = {
        "sessionId": result["session_id"],
        "finalResponse": result.get("final_response"),
        "completed": bool(result.get("completed")),
        "apiCalls": int(result.get("api_calls") or 0),
        "exitReason": result.get("exit_reason"),
        "interrupted": bool(result.get("interrupted")),
        "failed": bool(result.get("failed")),
        "partial": bool(result.get("partial")),
        "usage": {"promptTokens": int(usage.get("prompt_tokens", 0)),
                  "completionTokens": int(usage.get("completion_tokens", 0)),
                  "cachedTokens": int(usage.get("cached_tokens", 0))},
    }
    if result.get("error"):
        out["error"] = {"category": result["error"].get("category"), "message": result["error"].get("message")}
    if result.get("pending_steer"):
        out["pendingSteer"] = result["pending_steer"]
    return out


def answer_text(result: dict[str, Any]) -> tuple[types.MessageType, str]:
    """What ``window/showMessage`` says about a finished turn."""
    if result.get("failed"):
        error = result.get("error") or {}
        return types.MessageType.Error, f"agentls: the turn failed ({error.get('category')}): {error.get('message')}"
    final = result.get("finalResponse")
    if result.get("interrupted"):
        return types.MessageType.Warning, "agentls: the turn was interrupted" + (f". {final}" if final else "")
    if final:
        return types.MessageType.Info, f"agentls: {final}"
    return types.MessageType.Warning, f"agentls: the turn ended without an answer ({result.get('exitReason')})"


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
        out = wire_result(result)
        if result.get("cleanup_errors"):
            log.warning("turn cleanup errors: %s", result["cleanup_errors"])
        if out.get("pendingSteer") and not out["interrupted"]:  # after an interrupt the user said stop
            self.background(agent, out["pendingSteer"])
        if show_answer:
            kind, message = answer_text(out)
            self._ls.show(kind, message)
            self._ls.log(message)  # the whole answer, where a status line cuts it (Helix's :log-open)
        return out

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
