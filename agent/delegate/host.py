"""A child's view of its parent's host: the same editor, files, terminals and permission prompts, with the
child's tool calls marked as the delegate call's children (docs/loop.md §9.9).

Its ``tool_call``/``tool_call_update``s reach the editor with ``_meta.agentls.parentToolCallId`` and an id
made unique in the parent session (``<delegate call id>.<child>.<id>``), everything else a child emits
(its text, usage, turn state, title) is told to ``on_event`` only: the delegate call's card shows it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..fileio import TextWindow
from ..host import (
    CommandResult,
    CommandSpec,
    Diagnostic,
    DiagnosticsHost,
    Host,
    PermissionDecision,
    PermissionRequest,
    WriteResult,
)
from ..types import SessionUpdate

Send = Callable[[SessionUpdate], Awaitable[None]]
Listener = Callable[[SessionUpdate], Awaitable[None]]
TOOL_UPDATES = frozenset({"tool_call", "tool_call_update"})


def with_parent(update: SessionUpdate, parent_id: str, call_id: str) -> SessionUpdate:
    """``update`` (a tool call's) under ``call_id`` and marked as a child of ``parent_id``."""
    meta: dict[str, Any] = dict(update.get("_meta") or {})
    meta["agentls"] = {**(meta.get("agentls") or {}), "parentToolCallId": parent_id}
    return {**update, "toolCallId": call_id, "_meta": meta}


class ChildHost:
    def __init__(self, parent: Host, send: Send, parent_call_id: str, index: int, on_event: Listener) -> None:
        self.parent = parent
        self._send = send
        self.parent_call_id = parent_call_id
        self._prefix = f"{parent_call_id}.{index}."
        self._on_event = on_event

    def call_id(self, child_id: str) -> str:
        """A child's tool-call id as the editor knows it."""
        return self._prefix + child_id

    @property
    def root(self) -> Path:
        return self.parent.root

    async def read_text(self, path: Path) -> str:
        return await self.parent.read_text(path)

    async def read_window(self, path: Path, offset: int, limit: int, max_line_chars: int) -> TextWindow:
        return await self.parent.read_window(path, offset, limit, max_line_chars)

    async def write_text(self, path: Path, content: str, *, previous: str | None) -> WriteResult:
        return await self.parent.write_text(path, content, previous=previous)

    async def delete_file(self, path: Path) -> WriteResult:
        return await self.parent.delete_file(path)

    async def run_command(self, spec: CommandSpec) -> CommandResult:
        return await self.parent.run_command(replace(spec, tool_call_id=self.call_id(spec.tool_call_id)))

    @property
    def can_ask(self) -> bool:
        return bool(getattr(self.parent, "can_ask", True))

    async def request_permission(self, request: PermissionRequest) -> PermissionDecision | None:
        return await self.parent.request_permission(replace(request, tool_call_id=self.call_id(request.tool_call_id)))

    async def send_update(self, update: SessionUpdate) -> None:
        await self._on_event(update)
        if update.get("sessionUpdate") in TOOL_UPDATES and isinstance(update.get("toolCallId"), str):
            await self._send(with_parent(update, self.parent_call_id, self.call_id(update["toolCallId"])))

    async def release(self, task_id: str | None = None) -> None:
        """Nothing: the parent's session releases the terminals when it ends (a child's end must not release
        the parent's)."""

    async def diagnostics(self, paths: Sequence[Path], *, settle: bool) -> dict[Path, list[Diagnostic]] | None:
        if isinstance(self.parent, DiagnosticsHost):
            return await self.parent.diagnostics(paths, settle=settle)
        return None
