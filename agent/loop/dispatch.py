"""Tool execution: batches split at barriers, read-only calls in parallel, results in call order."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from .. import events
from .parts import TurnParts
from .prepare import PreparedCall
from .focused import request_text
from .rewrite import rewriter
from .save import save
from .state import TurnState
from ..paths import OutsideWorkspace, resolve_in_workspace
from ..tools.base import ToolOutput
from ..truncate import cap_text
from ..types import Message, SessionUpdate, add_usage

log = logging.getLogger("agentls.tools")

INTERRUPTED = "error: interrupted by the user while this tool was running"
SKIPPED = "skipped: interrupted by the user before this tool ran"
UI_PREVIEW_CHARS = 4000


def batches(prepared: list[PreparedCall]) -> list[list[int]]:
    """Consecutive read-only calls share a batch; anything else (writes, commands, invalid calls) stands alone."""
    groups: list[list[int]] = []
    current: list[int] = []
    for i, p in enumerate(prepared):
        if p.tool is not None and p.error is None and p.tool.read_only:
            current.append(i)
            continue
        if current:
            groups.append(current)
            current = []
        groups.append([i])
    if current:
        groups.append(current)
    return groups


def _paths(root: Path, p: PreparedCall) -> list[Path]:
    """The workspace paths a call names (those outside the workspace are left out)."""
    if p.tool is None or p.args is None:
        return []
    out = []
    for raw in p.tool.paths(p.args):
        try:
            out.append(resolve_in_workspace(root, raw))
        except OutsideWorkspace:
            continue
    return out


async def announce(parts: TurnParts, prepared: list[PreparedCall]) -> list[list[Path]]:
    """A ``tool_call`` update per call; returns the workspace paths each call names (resolved once)."""
    root = parts.conversation.root
    named = []
    for p in prepared:
        tool = p.tool
        paths = _paths(root, p)
        named.append(paths)
        title = (tool.title(p.args) if tool and p.args is not None else "") or p.call["function"]["name"]
        await parts.updates.send(events.tool_call(
            p.call["id"], title, tool.kind if tool else "other",
            locations=[events.location(str(path)) for path in paths],
            raw_input=p.args if p.args is not None else {"arguments": p.call["function"]["arguments"]}))
    return named


def _touched_paths(root: Path, p: PreparedCall, named: list[Path]) -> list[Path]:
    """The paths a call named, and for a command the paths its command line mentions (for hints)."""
    assert p.tool is not None and p.args is not None
    if p.tool.kind == "execute" and isinstance(p.args.get("command"), str):
        from ..context.hints import paths_in_command

        cwd = named[0] if named else root
        return [*named, *paths_in_command(p.args["command"], cwd, root)]
    return named


@dataclass
class CallResult:
    text: str  # what the model reads
    is_error: bool
    update: SessionUpdate  # the final tool_call_update, sent once the result is persisted
    images: list[dict[str, Any]] = field(default_factory=list)  # for models that take images in tool results


async def _run_one(parts: TurnParts, turn: TurnState, p: PreparedCall, named: list[Path]) -> CallResult:
    tool, args = p.tool, p.args
    assert tool is not None and args is not None
    call_id = p.call["id"]
    await parts.updates.send(events.tool_call_update(call_id, status="in_progress"))

    async def run(approved: bool) -> ToolOutput:
        if parts.profile.described_edits:  # its edits are said in words (tools/described.py): the model writes the text
            return await parts.tools.run(tool, args, call_id, turn.task_id, rewriter(parts, turn, p.call),
                                         request_text(parts), approved=approved)
        return await parts.tools.run(tool, args, call_id, turn.task_id, approved=approved)

    if parts.workflows is None:
        out = await run(False)
    else:  # PreToolUse and PostToolUse hooks (agent/workflows/gate.py)
        from ..workflows.gate import guarded

        out = await guarded(parts.workflows, parts.tools, tool, args, call_id, run)
    if out.usage is not None:  # a subagent's model calls count in the turn's usage (docs/loop.md §9.9)
        add_usage(turn.calls.usage, out.usage)
    text, _ = cap_text(out.text, parts.tools.output_limit)
    if p.note:
        text = f"[{p.note}]\n{text}"
    try:
        hint = await parts.tools.hints_for(_touched_paths(parts.conversation.root, p, named))
    except Exception:  # hints only add information; they never break a tool result
        log.exception("loading subdirectory hints failed")
        hint = None
    if hint:
        text += hint
    ui = out.content or [events.text_content(cap_text(out.text, UI_PREVIEW_CHARS)[0])]
    return CallResult(text, out.is_error, events.tool_call_update(
        call_id, status="failed" if out.is_error else "completed", content=ui,
        locations=out.locations or None, raw_output=out.raw_output), out.images)


def _failed(p: PreparedCall, text: str) -> CallResult:
    return CallResult(text, True, events.tool_call_update(p.call["id"], status="failed",
                                                       content=[events.text_content(text)]))


class _Results:
    """Results join the transcript in call order as soon as a prefix of them is ready, are persisted, and
    only then does the editor hear they are done: whatever it saw completed survives a crash."""

    def __init__(self, parts: TurnParts, turn: TurnState, prepared: list[PreparedCall]) -> None:
        self.parts, self.turn, self.prepared = parts, turn, prepared
        self.landed: list[CallResult | None] = [None] * len(prepared)
        self.flushed = 0
        self._lock = anyio.Lock()

    async def put(self, i: int, result: CallResult) -> None:
        self.landed[i] = result
        await self.flush()

    async def flush(self) -> None:
        conversation = self.parts.conversation
        async with self._lock:
            ready: list[SessionUpdate] = []
            while self.flushed < len(self.prepared) and (o := self.landed[self.flushed]) is not None:
                p = self.prepared[self.flushed]
                msg: Message = {"role": "tool", "tool_call_id": p.call["id"], "name": p.call["function"]["name"],
                                "content": [{"type": "text", "text": o.text}, *o.images] if o.images else o.text}
                if o.is_error:
                    msg["meta"] = {"error": True}
                name, raw = p.call["function"]["name"], p.call["function"]["arguments"]
                self.turn.outcome.tool_result(name, p.args, o.is_error, o.text)
                self.turn.guard.result(name, p.args, raw, o.text)
                conversation.messages.append(msg)
                ready.append(o.update)
                self.flushed += 1
            if not ready:
                return
            await save(self.parts, self.turn)  # a failure is reported and the results kept in memory: the turn goes on
            for update in ready:
                await self.parts.updates.send(update)


async def run_calls(parts: TurnParts, turn: TurnState, prepared: list[PreparedCall],
                    named: list[list[Path]]) -> None:
    """Append one tool message per call to the transcript, in call order, whatever happens (errors,
    timeouts, interrupts). ``named`` is what ``announce`` returned."""
    parts.views.changed()  # the tools may create or remove files: the next model call looks again
    results = _Results(parts, turn, prepared)
    started: set[int] = set()
    for i, p in enumerate(prepared):
        if p.error is not None:
            await results.put(i, _failed(p, p.error))

    async def run_index(i: int) -> None:
        started.add(i)
        await results.put(i, await _run_one(parts, turn, prepared[i], named[i]))

    try:
        with parts.control.interruptible():
            for group in batches(prepared):
                todo = [i for i in group if results.landed[i] is None]
                if len(todo) == 1:
                    await run_index(todo[0])
                elif todo:
                    async with anyio.create_task_group() as tg:
                        for i in todo:
                            tg.start_soon(run_index, i)
    finally:  # also when cancelled from outside (a subagent's turn when its parent's is): every card is closed
        with anyio.CancelScope(shield=True):
            for i, p in enumerate(prepared):
                if results.landed[i] is None:
                    results.landed[i] = _failed(p, INTERRUPTED if i in started else SKIPPED)
            await results.flush()
