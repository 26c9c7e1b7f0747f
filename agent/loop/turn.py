"""The turn state machine: call the model, validate its tool calls, run them, append, repeat."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agentls.agent.loop.call import call_model
from agentls.agent.loop.dispatch import announce, run_calls
from agentls.agent.loop.prepare import PreparedCall, prepare_calls
from agentls.agent.loop.state import TurnState
from agentls.agent.providers.errors import ProviderError
from agentls.agent.result import ExitReason
from agentls.agent.types import Message, text_of

if TYPE_CHECKING:
    from agentls.agent.agent import AIAgent

log = logging.getLogger("agentls.loop")

NUDGE = "(Your last reply was empty. Continue the task: call a tool, or answer the user.)"
GRACE = ("You have used the whole step budget for this turn, so tools are no longer available. Reply now, "
         "without calling tools, with a short summary: what you did, what is left, and what the user should do next.")
CONTINUE = "(Your reply was cut off by the output limit. Continue exactly where it stopped, without repeating.)"
STOPPED = "(I stopped: I kept repeating the same tool call without progress.)"
MAX_EMPTY_RETRIES = 2
MAX_CONTINUATIONS = 2


def _exit(turn: TurnState, reason: ExitReason, error: ProviderError | None = None) -> None:
    turn.exit_reason = reason
    if error is not None:
        turn.error = {"category": error.category, "message": str(error)}


def guard_calls(turn: TurnState, prepared: list[PreparedCall]) -> None:
    """The loop guard: the ``limit``-th identical call does not run and stops tool use for the turn."""
    for p in prepared:
        if p.error is not None:
            continue
        stop = turn.guard.see(p.call["function"]["name"], p.args, p.call["function"]["arguments"], turn.iterations)
        if stop:
            p.error = stop
            turn.outcome.stop_tools(f"{p.call['function']['name']} was called {turn.guard.limit} times with the "
                                    "same arguments")


async def _grace(agent: AIAgent, turn: TurnState) -> None:
    """One tools-free call asking for a summary, then ``budget_exhausted``."""
    try:
        with agent._interruptible() as scope:
            response = await call_model(agent, turn, tools=False, extra_user=GRACE, purpose="grace")
    except ProviderError as exc:  # the budget is what ended the turn; the failed summary call is its error
        _exit(turn, ExitReason.BUDGET_EXHAUSTED, exc)
        return
    if scope.cancelled_caught:
        _exit(turn, ExitReason.INTERRUPTED)
        return
    text = text_of(response.message).strip()
    if text:
        message: Message = {"role": "assistant", "content": text}
        if agent.messages and agent.messages[-1].get("role") == "assistant":
            agent.messages[-1] = {**agent.messages[-1], "content": text}
        else:
            agent.messages.append(message)
        turn.final_response = text
    _exit(turn, ExitReason.BUDGET_EXHAUSTED)


async def run_turn(agent: AIAgent, turn: TurnState) -> None:
    extra_user: str | None = None
    partial: str | None = None
    while True:
        if agent._interrupt_requested:
            _exit(turn, ExitReason.INTERRUPTED)
            return
        await agent._run_pending_compressions(turn)
        if partial is None and agent._should_compress():
            await agent._compress(turn, automatic=True)
        # max_iterations bounds this agent; the budget may be shared with subagents and bound them all.
        if turn.iterations >= agent.max_iterations or not agent.budget.consume():
            await _grace(agent, turn)
            return
        turn.iterations += 1
        await agent._persist(turn)
        extra_messages: list[Message] | None = None
        if partial is not None:
            extra_messages = [{"role": "assistant", "content": partial}]
        try:
            with agent._interruptible() as scope:
                response = await call_model(agent, turn, extra_user=extra_user, extra_messages=extra_messages)
        except ProviderError as exc:
            _exit(turn, ExitReason.FAILED, exc)
            return
        if scope.cancelled_caught:
            _exit(turn, ExitReason.INTERRUPTED)
            return
        extra_user = None
        message = response.message
        calls = message.get("tool_calls") or []
        if calls:
            if partial is not None:  # a continuation that turned into tool calls keeps the text before them
                message = {**message, "content": partial + (text_of(message) or "")}
                partial = None
            if turn.outcome.tools_stopped:  # a provider that ignored tool_choice "none": its calls never run
                message = {"role": "assistant", "content": text_of(message) or STOPPED}
                agent.messages.append(message)
                turn.final_response = str(message["content"])
                _exit(turn, ExitReason.TEXT_RESPONSE)
                return
            prepared = prepare_calls(calls, agent.registry, truncated=response.finish_reason == "length")
            guard_calls(turn, prepared)
            stored: Message = {**message, "tool_calls": [p.call for p in prepared]}
            agent.messages.append(stored)
            await announce(agent, prepared)
            await run_calls(agent, turn, prepared)  # appends and persists the results as they land
            if agent._interrupt_requested:
                await agent._persist(turn)
                _exit(turn, ExitReason.INTERRUPTED)
                return
            steer = agent._take_steer()
            if steer:
                agent.messages.append({"role": "user", "content": steer, "meta": {"steer": True}})
            await agent._persist(turn)
            continue
        text = text_of(message)
        if response.finish_reason == "content_filter" and not text.strip():
            _exit(turn, ExitReason.FAILED,
                  ProviderError("content_policy", "the provider refused to answer (content filter)"))
            return
        if not text.strip() and partial is None:
            last_role = agent.messages[-1].get("role") if agent.messages else None
            if last_role == "tool" and not turn.nudged:
                turn.nudged = True
                extra_user = NUDGE
                continue
            if turn.empty_retries < MAX_EMPTY_RETRIES:
                turn.empty_retries += 1  # a plain retry: the one nudge is never repeated
                continue
            _exit(turn, ExitReason.EMPTY_RESPONSE)
            return
        if partial is not None:
            text = partial + text
            message = {**message, "content": text}
        if response.finish_reason == "length" and turn.continuations < MAX_CONTINUATIONS:
            turn.continuations += 1
            partial = text
            extra_user = CONTINUE
            continue
        agent.messages.append(message)
        turn.final_response = text
        _exit(turn, ExitReason.TEXT_RESPONSE)
        return
