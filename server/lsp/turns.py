"""LSP turns as calls on the runtime's turns (``server/runtime/turns.py``), with ``$/progress`` around them.

A turn answered to a request runs in the request's own task, so ``$/cancelRequest`` cancels it: the
core persists the partial transcript and re-raises, and pygls answers -32800. A steer that missed the
turn runs as a follow-up inside the same request; the result is then the last turn's, with ``apiCalls``
and ``usage`` counted over all of them. A steer on an idle session starts a background turn; its answer
reaches the client as updates, else with ``window/showMessage``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from agentls.agent.footer import edits_failed, summary, summary_json
from agentls.agent.result import TurnResult
from .host import LspHost
from .progress import TurnProgress, ending, first_words
from ..runtime import turns

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from .server import AgentServer
    from ..runtime.live import LiveSession
    from ..runtime.turns import TurnRun

log = logging.getLogger("agentls.lsp.turns")


def wire_result(run: TurnRun) -> dict[str, Any]:
    """The runtime's run as the ``agent/turn`` result (camelCase, no transcript)."""
    result = run.last
    usage = {"promptTokens": 0, "completionTokens": 0, "cachedTokens": 0}
    for r in run.results:
        usage["promptTokens"] += r.usage["prompt_tokens"]
        usage["completionTokens"] += r.usage["completion_tokens"]
        usage["cachedTokens"] += r.usage["cached_tokens"]
    out: dict[str, Any] = {
        "sessionId": result.session_id,
        "finalResponse": result.final_response,
        "completed": result.completed,
        "apiCalls": sum(r.api_calls for r in run.results),
        "exitReason": result.exit_reason.value,
        "interrupted": result.interrupted,
        "failed": result.failed,
        "partial": result.partial,
        "usage": usage,
    }
    if result.error is not None:
        out["error"] = {"category": result.error["category"], "message": result.error["message"]}
    out["outcome"] = summary_json(run.merged)
    if run.leftover_steer:
        out["pendingSteer"] = run.leftover_steer
    return out


def answer_text(result: TurnResult) -> tuple[types.MessageType, str]:
    """What ``window/showMessage`` says about a finished turn (``show`` cuts it to one line). The outcome's
    summary comes first, where a status line shows it (docs/protocol.md)."""
    kind, text = _answer_text(result)
    said = summary(result)
    if said:
        text = f"agentls [{said}]: " + text.removeprefix("agentls: ")
        if edits_failed(result) and kind is types.MessageType.Info:
            kind = types.MessageType.Warning
    return kind, text


def _answer_text(result: TurnResult) -> tuple[types.MessageType, str]:
    if result.failed and result.error is not None:
        error = result.error
        return types.MessageType.Error, f"agentls: the turn failed ({error['category']}): {error['message']}"
    final = result.final_response
    if result.interrupted:
        return types.MessageType.Warning, "agentls: the turn was interrupted" + (f". {final}" if final else "")
    if final:
        return types.MessageType.Info, f"agentls: {final}"
    return types.MessageType.Warning, f"agentls: the turn ended without an answer ({result.exit_reason.value})"


class LspHooks:
    """``$/progress`` for the request's turns, fed by the session host's tool calls."""

    def __init__(self, ls: AgentServer, progress: TurnProgress) -> None:
        self._ls = ls
        self._progress = progress

    async def started(self, agent: AIAgent) -> None:
        await self._progress.start()
        if isinstance(agent.host, LspHost):
            agent.host.progress = self._progress

    async def ended(self, result: TurnResult) -> None:
        if result.cleanup_errors:
            log.warning("turn cleanup errors: %s", result.cleanup_errors)


def _finish(ls: AgentServer, session: LiveSession, progress: TurnProgress, done: TurnRun | BaseException,
            show_answer: bool) -> None:
    host = session.agent.host if session.agent is not None else None
    if isinstance(host, LspHost) and host.progress is progress:
        host.progress = None
    if isinstance(done, BaseException):
        progress.end("cancelled" if isinstance(done, asyncio.CancelledError) else f"failed: {done}")
        return
    said = summary(done.merged)
    progress.end(ending(done.last) + (f" \u2014 {said}" if said else ""))
    if show_answer:
        for result in done.results:
            kind, message = answer_text(result)
            ls.show(kind, message, log=True)  # the whole answer goes to the log, where a status line cuts it


async def run(ls: AgentServer, session: LiveSession, prompt: Any, *, task_id: str | None = None,
              runtime_context: str | None = None, token: int | str | None = None,
              show_answer: bool = False) -> dict[str, Any]:
    """The request's turns, queued behind the session's earlier ones; the wire result."""
    progress = TurnProgress(ls, first_words(prompt), token, on_cancel=session.interrupt)
    try:
        done = await turns.run(ls.sessions, session, prompt, hooks=LspHooks(ls, progress), task_id=task_id,
                               runtime_context=runtime_context)
    except BaseException as exc:
        _finish(ls, session, progress, exc, show_answer)
        raise
    _finish(ls, session, progress, done, show_answer)
    return wire_result(done)


def background(ls: AgentServer, session: LiveSession, text: str) -> None:
    """A turn nobody waits for (a steer on an idle session): its answer reaches the client as updates,
    else with ``window/showMessage``."""
    progress = TurnProgress(ls, first_words(text), None, on_cancel=session.interrupt)

    async def report(done: TurnRun | BaseException) -> None:
        _finish(ls, session, progress, done, show_answer=not ls.features.updates)
        if isinstance(done, BaseException):
            ls.show(types.MessageType.Error, f"agentls: a turn failed: {done}")

    turns.background(ls.sessions, session, text, hooks=LspHooks(ls, progress), report=report)
