"""The turn's state machine: call the model, validate its tool calls, run them, append, repeat."""

from __future__ import annotations

import logging

from . import change_request, plain_answer, resample
from .call import call_model
from .dispatch import announce, run_calls
from .exits import BudgetExhausted, EmptyResponses, Ending, Interrupted, ModelFailed, TurnExit
from .parts import TurnParts
from .prepare import PreparedCall, prepare_calls
from .first_edit import first_edit
from .preread import preread
from .save import save
from .state import TurnState
from .test_check import check_tests
from ..providers.errors import ProviderError
from ..result import ExitReason
from ..types import Message, text_of

log = logging.getLogger("agentls.loop")

NUDGE = "(Your last reply was empty. Continue the task: call a tool, or answer the user.)"
GRACE = ("You have used the whole step budget for this turn, so tools are no longer available. Reply now, "
         "without calling tools, with a short summary: what you did, what is left, and what the user should do next.")
CONTINUE = "(Your reply was cut off by the output limit. Continue exactly where it stopped, without repeating.)"
STOPPED = "(I stopped: I kept repeating the same tool call without progress.)"
MAX_EMPTY_RETRIES = 2
MAX_CONTINUATIONS = 2


async def run_rounds(parts: TurnParts, turn: TurnState) -> Ending:
    """Rounds until the model answers in text. An early end is raised where it happens as a ``TurnExit``
    and becomes the turn's ``Ending`` here, in one place."""
    try:
        return await _rounds(parts, turn)
    except TurnExit as end:
        return end.ending()


def guard_calls(turn: TurnState, prepared: list[PreparedCall]) -> None:
    """The loop guard: the ``limit``-th identical call does not run and stops tool use for the turn."""
    for p in prepared:
        if p.error is not None:
            continue
        name = p.call["function"]["name"]
        stop = turn.guard.see(name, p.args, p.call["function"]["arguments"], turn.iterations)
        if stop:
            p.error = stop
            turn.outcome.stop_tools(f"{name} was called {turn.guard.limit} times with the same arguments")


async def _grace(parts: TurnParts, turn: TurnState) -> BudgetExhausted:
    """The budget is spent: one tools-free call asking for a summary. Its failure is the exit's error. A
    subagent's share of its parent's budget has no grace call: it stops here (docs/loop.md §9.9)."""
    if not parts.budget.grace:
        return BudgetExhausted()
    try:
        response = await call_model(parts, turn, tools=False, extra_user=GRACE, purpose="grace")
    except ModelFailed as failed:
        return BudgetExhausted(failed.error)
    text = text_of(response.message).strip()
    if not text:
        return BudgetExhausted()
    messages = parts.conversation.messages
    if messages and messages[-1].get("role") == "assistant":
        messages[-1] = {**messages[-1], "content": text}
    else:
        messages.append({"role": "assistant", "content": text})
    return BudgetExhausted(final_response=text)


async def _rounds(parts: TurnParts, turn: TurnState) -> Ending:
    conversation, control = parts.conversation, parts.control
    messages = conversation.messages  # the same list for the session's life (replaced in place)
    extra_user: str | None = None
    partial: str | None = None  # text of a reply cut off by the output limit, being continued
    await preread(parts, turn)  # a small model first gets the files its request names (agent/loop/preread.py)
    await first_edit(parts, turn)  # ... and on a change request of one file, its edit (agent/loop/first_edit.py)
    await check_tests(parts, turn)  # ... checked against the file's tests, and repaired (agent/loop/test_check.py)
    if messages and messages[-1].get("role") == "tool" and (steer := control.take_steer()) is not None:
        messages.append({"role": "user", "content": steer, "meta": {"steer": True}})  # sent during those steps (which
        # stop for it): the model reads it next, on the transcript
    while True:
        if control.interrupt_requested:
            raise Interrupted()
        await parts.compactor.run_queued()
        # The answer after the agent's own edits reads no transcript (loop/plain_answer.py): no compression for it
        plain = extra_user is None and partial is None and plain_answer.is_plain(parts, turn)
        if partial is None and not plain and parts.compactor.due():
            if parts.workflows is not None:
                with control.interruptible():  # a cancel stops (and kills) a PreCompact hook at once
                    await parts.workflows.before_compact("auto", None)
                if control.interrupt_requested:
                    raise Interrupted()
            await parts.compactor.compress(automatic=True)
        # max_iterations bounds this agent; the budget may be shared with subagents and bound them all.
        if turn.iterations >= parts.max_iterations or not parts.budget.consume():
            raise await _grace(parts, turn)
        turn.iterations += 1
        await save(parts, turn)  # before every model call; a store that fails does not end the turn (loop/save.py)
        extra_messages: list[Message] | None = None
        if partial is not None:
            extra_messages = [{"role": "assistant", "content": partial}]
        response = await call_model(parts, turn, extra_user=extra_user, extra_messages=extra_messages)
        for _ in range(parts.profile.resamples):
            if not resample.repeats_failure(messages, response.message):
                break
            response = await call_model(parts, turn, extra_user=extra_user, extra_messages=extra_messages,
                                        temperature=resample.TEMPERATURE)  # agent/loop/resample.py
        extra_user = None
        message = response.message
        calls = message.get("tool_calls") or []
        if calls:
            message = conversation.call_ids.assign(message, messages)  # unique in the session (agent/call_ids.py)
            calls = message.get("tool_calls") or []
            if partial is not None:  # a continuation that turned into tool calls keeps the text before them
                message = {**message, "content": partial + (text_of(message) or "")}
                partial = None
            if turn.outcome.tools_stopped:  # a provider that ignored tool_choice "none": its calls never run
                text = text_of(message) or STOPPED
                messages.append({"role": "assistant", "content": text})
                return Ending(ExitReason.TEXT_RESPONSE, final_response=text)
            prepared = prepare_calls(calls, parts.registry, truncated=response.finish_reason == "length",
                                     parameters=parts.views.parameters)
            guard_calls(turn, prepared)
            messages.append({**message, "tool_calls": [p.call for p in prepared]})
            named = await announce(parts, prepared)
            await run_calls(parts, turn, prepared, named)  # appends and persists the results as they land
            if control.interrupt_requested:
                await save(parts, turn)
                raise Interrupted()
            await check_tests(parts, turn)
            if control.interrupt_requested:
                await save(parts, turn)
                raise Interrupted()
            steer = control.take_steer()
            if steer:
                messages.append({"role": "user", "content": steer, "meta": {"steer": True}})
            await save(parts, turn)
            continue
        text = text_of(message)
        if response.finish_reason == "content_filter" and not text.strip():
            raise ModelFailed(ProviderError("content_policy", "the provider refused to answer (content filter)"))
        if not text.strip() and partial is None:
            last_role = messages[-1].get("role") if messages else None
            if last_role == "tool" and not turn.nudged:
                turn.nudged = True
                extra_user = NUDGE
                continue
            if turn.empty_retries < MAX_EMPTY_RETRIES:
                turn.empty_retries += 1  # a plain retry: the one nudge is never repeated
                continue
            raise EmptyResponses()
        if partial is not None:
            text = partial + text
            message = {**message, "content": text}
        if (nudge := change_request.nudge_for(parts, turn)) is not None:
            extra_user = nudge  # an answer in words to a change request, no edit tried: one nudge, not kept
            continue
        # A small model's answer that fills its output cap is a loop, not a long answer: it is not continued.
        if response.finish_reason == "length" and turn.continuations < MAX_CONTINUATIONS \
                and parts.profile.continues_cut_answers:
            turn.continuations += 1
            partial = text
            extra_user = CONTINUE
            continue
        messages.append(message)
        if parts.workflows is not None:  # a Stop hook may send the model back to work (bounded, on the budget)
            more, ended = None, False
            with control.interruptible():  # a cancel stops (and kills) a Stop hook at once
                more = await parts.workflows.at_stop(text, turn.stop_continues)
                ended = True
            if not ended:
                raise Interrupted(final_response=text)
            if more is not None:
                turn.stop_continues += 1
                messages.append({"role": "user", "content": f"(A Stop hook asks you to continue: {more})",
                                 "meta": {"hook": "Stop"}})
                continue
        return Ending(ExitReason.TEXT_RESPONSE, final_response=text)
