"""One turn from the user's message to its ``TurnResult``: start, the rounds, finalization, the title."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import anyio

from .. import events
from .exits import Ending
from .change_request import unmade, unmade_note
from .finalize import finalize
from .parts import TurnParts
from .rounds import run_rounds
from .state import TurnState
from .test_check import failing_note
from ..replay import replay_updates
from ..result import ExitReason, TurnResult
from ..sessions.lease import SessionBusy
from ..transcript import repair


@dataclass(frozen=True)
class TurnRequest:
    content: Any  # the user message's content (normalized)
    system_message: str | None = None  # used when the session's system prompt is first built
    history: Sequence[Any] | None = None  # a transcript that replaces the session's (repaired first)
    task_id: str | None = None
    runtime_context: str | None = None  # editor state: rides on this turn's user message only
    echo_prompt: bool = False  # send the prompt as a user_message_chunk (a turn the client did not type)


async def _start(parts: TurnParts, req: TurnRequest) -> TurnState:
    conversation = parts.conversation
    system_message = req.system_message
    if req.history is not None:
        items = list(req.history)
        if items and isinstance(items[0], dict) and items[0].get("role") == "system":
            system_message = system_message or str(items.pop(0).get("content") or "")
        conversation.replace(repair(items))
    tools = parts.registry.tools()
    workflows = parts.workflows.prompt_section() if parts.workflows else None  # skills, memory: agent/workflows
    await conversation.ensure_system_prompt(
        system_message, lambda context, extra: parts.profile.system_prompt(conversation.root, context, extra, tools, workflows=workflows))
    if not parts.budget_shared:
        parts.budget.reset()
    conversation.start_turn(req.content)
    context = "\n\n".join(x for x in (conversation.take_notes(), req.runtime_context) if x) or None
    turn = TurnState(task_id=req.task_id, runtime_context=context)
    parts.views.changed()  # the user may have added or removed files since the last turn
    parts.tools.start_turn(turn.outcome)
    return turn


async def run_turn(parts: TurnParts, req: TurnRequest) -> TurnResult:
    """The caller holds the session's turn lock and has set its parts up. Steers and interrupts count from
    here, while the session's lease is taken too (``SessionBusy`` when another process drives it, carrying
    the steers accepted meanwhile as ``pending_steer``). A turn that raises drops the steers it left queued."""
    parts.control.begin()
    try:
        async with parts.conversation.lease():
            return await _announced(parts, req)
    except SessionBusy as busy:  # the turn never ran: steers it accepted meanwhile go back to the caller
        busy.pending_steer = parts.control.take_steer()
        raise
    finally:
        parts.control.end()
        parts.compactor.release_queued()  # compressions asked for after the last boundary run on their own
        parts.conversation.end_turn()


async def _announced(parts: TurnParts, req: TurnRequest) -> TurnResult:
    """The editor hears the turn start (``running``) and end (``idle`` with its exit reason) whatever happens."""
    control, send = parts.control, parts.updates.send
    exit_reason = ExitReason.CANCELLED
    try:
        await send(events.turn_state("running", taskId=req.task_id))
        if req.echo_prompt:
            for update in replay_updates([{"role": "user", "content": req.content}]):
                await send(update)
        result = await _run(parts, req)
        exit_reason = result.exit_reason
        return result
    finally:
        control.end()
        with anyio.CancelScope(shield=True), anyio.move_on_after(2):
            await send(events.turn_state("idle", exitReason=exit_reason))


async def _run(parts: TurnParts, req: TurnRequest) -> TurnResult:
    if parts.workflows is not None:  # a custom /command expanded, SessionStart and UserPromptSubmit hooks
        begun = None
        with parts.control.interruptible():  # a cancel stops (and kills) a hook at once, as for tools
            begun = await parts.workflows.begin_turn(req.content, resumed=bool(parts.conversation.messages))
        if begun is None:  # interrupted before the turn started: nothing reaches the model or the store
            return TurnResult(session_id=parts.conversation.session_id, exit_reason=ExitReason.INTERRUPTED,
                              messages=parts.conversation.transcript())
        if begun.answer is not None:
            return await _answered(parts, begun.answer)
        req = replace(req, content=begun.content)
    turn = await _start(parts, req)
    try:
        ending = await run_rounds(parts, turn)
        ending = await _honest_end(parts, turn, ending)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await finalize(parts, turn, Ending(ExitReason.CANCELLED))
        raise
    await finalize(parts, turn, ending)
    await parts.compactor.run_queued()  # asked for during the turn, after its last model call
    try:
        await parts.titles.after_turn(req.content)
    except Exception as exc:
        turn.cleanup_errors.append(f"title: {type(exc).__name__}: {exc}")
    conversation, outcome = parts.conversation, turn.outcome
    files_changed = outcome.files_changed(conversation.root)
    return TurnResult(session_id=conversation.session_id, exit_reason=ending.reason,
                      final_response=ending.final_response, messages=conversation.transcript(),
                      api_calls=turn.calls.api_calls, usage=turn.calls.usage, error=ending.error,
                      pending_steer=parts.control.take_steer(), cleanup_errors=tuple(turn.cleanup_errors),
                      files_changed=files_changed, failed_calls=outcome.failed_calls(),
                      refused=tuple(outcome.refused), failed_edits=outcome.failed_edits(),
                      last_call_failed=outcome.last_call_failed, tools_stopped=outcome.tools_stopped,
                      unmade_change=unmade(turn, bool(files_changed)), tests_failing=turn.tests.failing)


async def _honest_end(parts: TurnParts, turn: TurnState, ending: Ending) -> Ending:
    """A small model's answer to a change request that changed nothing gets the line that says so; one whose
    change still fails the tests agentls ran after it, the line that says that."""
    text = ending.final_response
    if ending.reason is not ExitReason.TEXT_RESPONSE or not text:
        return ending
    note = unmade_note(parts, turn, bool(turn.outcome.files_changed(parts.conversation.root))) or failing_note(turn)
    messages = parts.conversation.messages
    if note is None or not messages or messages[-1].get("role") != "assistant" or messages[-1].get("tool_calls"):
        return ending
    await parts.updates.send(events.message_chunk(note))
    messages[-1] = {**messages[-1], "content": text + note}
    return replace(ending, final_response=text + note)


async def _answered(parts: TurnParts, text: str) -> TurnResult:
    """Answered without the model (``/memory``, a prompt a hook blocked): nothing reaches the model or the store."""
    await parts.updates.send(events.message_chunk(text + "\n"))
    conversation = parts.conversation
    return TurnResult(session_id=conversation.session_id, exit_reason=ExitReason.TEXT_RESPONSE, final_response=text,
                      messages=conversation.transcript())
