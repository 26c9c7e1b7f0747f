"""ACP prompts, cancels and steers as calls on the runtime's turns (``server/runtime/turns.py``).

- ``session/prompt`` runs the session's turns; a steer that missed the turn runs as a follow-up inside
  the same prompt, and the prompt's stop reason is the last turn's.
- ``session/cancel`` cancels the running turn and every prompt still waiting (each answers ``cancelled``).
- ``_session/steering`` on an idle session starts a background turn (``startedNewTurn``).
- Before a session's first answer, its notices (ignored settings, the local model) appear as a quoted note.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from acp import RequestError

from agentls.agent.prompt_blocks import PromptError
from agentls.agent.footer import summary
from agentls.agent.result import ExitReason, TurnResult
from . import lifecycle
from .errors import auth_required, internal, invalid_params
from ..runtime import turns
from ..runtime.live import LiveSession, Steer
from ..runtime.registry import NoModel, SessionRegistry

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent
    from .updates import UpdateSink
    from ..runtime.turns import TurnRun

log = logging.getLogger("agentls.acp")

STOP_REASONS = {ExitReason.TEXT_RESPONSE: "end_turn", ExitReason.BUDGET_EXHAUSTED: "max_turn_requests",
                ExitReason.INTERRUPTED: "cancelled", ExitReason.CANCELLED: "cancelled",
                ExitReason.EMPTY_RESPONSE: "end_turn"}
EMPTY_ANSWER = ("\n_(The model returned an empty answer. Try again, rephrase the request, or run /compact "
                "if the conversation is long.)_\n")


def stop_reason(result: TurnResult) -> str:
    """The ACP stop reason for a core result; raises the JSON-RPC error for a failed turn."""
    if result.failed:
        error = result.error or {"category": "unknown", "message": "the turn failed"}
        category, message = error["category"], error["message"]
        if category == "content_policy":
            return "refusal"
        data = {"category": category, "message": message}
        if category == "auth":
            raise RequestError(-32000, f"The model provider rejected the credentials: {message}", data)
        raise internal(f"The model call failed ({category}): {message}", data)
    return STOP_REASONS.get(result.exit_reason, "end_turn")


class AcpHooks:
    """The session's notices before its first answer, a note after an empty answer."""

    def __init__(self, session: LiveSession, sink: UpdateSink) -> None:
        self._session = session
        self._sink = sink

    async def started(self, agent: AIAgent) -> None:
        notices, self._session.notices = self._session.notices, []
        if notices:
            text = "\n\n".join(n.text for n in notices)
            await self._sink.text("\n".join(f"> {line}" for line in text.splitlines()) + "\n\n")

    async def ended(self, result: TurnResult) -> None:
        if result.exit_reason is ExitReason.EMPTY_RESPONSE:
            await self._sink.text(EMPTY_ANSWER)
        said = summary(result)  # what the turn really did, whatever the model said (agent/footer.py)
        if said:
            await self._sink.text(f"\n\n_(agentls: {said})_\n")


def _reason(run: TurnRun) -> str:
    return "cancelled" if run.cancelled else stop_reason(run.last)


def usage(run: TurnRun, agent: AIAgent) -> dict[str, Any]:
    """The request's token usage (every turn of it) and the session's cost so far, for ``_meta.agentls``."""
    total = {"promptTokens": 0, "completionTokens": 0, "cachedTokens": 0}
    for result in run.results:
        total["promptTokens"] += result.usage["prompt_tokens"]
        total["completionTokens"] += result.usage["completion_tokens"]
        total["cachedTokens"] += result.usage["cached_tokens"]
    out: dict[str, Any] = {"usage": total}
    if agent.cost is not None:
        out["cost"] = {"amount": round(agent.cost, 6), "currency": "USD"}
    return out


async def prompt(sessions: SessionRegistry, session: LiveSession, sink: UpdateSink, content: Any,
                 meta: dict[str, Any] | None = None) -> str:
    """The request's stop reason; ``meta`` gets its usage (``usage``)."""
    try:
        run = await turns.run(sessions, session, content, hooks=AcpHooks(session, sink))
    except NoModel as exc:
        raise auth_required(lifecycle.NO_MODEL, str(exc)) from None
    except PromptError as exc:
        raise invalid_params(f"bad prompt: {exc}") from None
    if meta is not None and session.agent is not None:  # the turns ran, so the agent exists
        meta.update(usage(run, session.agent))
    return _reason(run)


async def steer(sessions: SessionRegistry, session: LiveSession, sink: UpdateSink, text: str,
                idle_behavior: str | None) -> str:
    """``injected``, ``startedNewTurn``, ``promptRequired`` (idle, when the client asked for it) or ``failed``."""
    steered = session.steer(text)
    if steered is not Steer.IDLE:
        return str(steered.value)
    if idle_behavior == "promptRequired":
        return "promptRequired"
    try:
        await sessions.agent(session)
    except NoModel:
        return "failed"

    async def report(done: TurnRun | BaseException) -> None:
        try:
            if isinstance(done, BaseException):
                raise done
            _reason(done)  # raises for a failed turn
        except Exception as exc:
            await sink.text(f"\n_(agentls: the steered turn failed: {exc})_\n")

    turns.background(sessions, session, text, hooks=AcpHooks(session, sink), report=report)
    return "startedNewTurn"
