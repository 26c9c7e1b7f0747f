"""``LspHost``: the core's ``Host`` for one session, acting through the editor.

- Reads: the synced buffer of an open document (or what the server just wrote), else the disk.
- Writes: ``workspace/applyEdit`` (a ``TextDocumentEdit`` with the buffer's version, ``CreateFile``
  plus an edit for a new file, ``DeleteFile``). A refused edit is reported to the model as "the user
  rejected this edit". A client that cannot apply edits gets direct disk writes.
- Terminals and permissions: ``terminal.py`` and ``permissions.py``.
- Updates: ``agent/update`` when the client declared ``experimental.agent.updates``; tool calls also
  feed the turn's ``$/progress``.
- Diagnostics: ``agent/diagnostics`` when the client declared ``experimental.agent.diagnostics``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from agentls.agent import events
from agentls.agent.host import (CommandResult, CommandSpec, Diagnostic, PermissionDecision, PermissionRequest,
                                WriteResult)
from agentls.agent.disk_host import DiskHost
from agentls.agent.fileio import TextWindow
from agentls.agent.types import SessionUpdate
from .diagnostics import DiagnosticsClient
from .documents import file_uri, text_edits
from .permissions import ask_permission
from .terminal import Terminals

if TYPE_CHECKING:
    from .progress import TurnProgress
    from .server import AgentServer

log = logging.getLogger("agentls.lsp.host")

REJECTED = "the user rejected this edit"
SYNC_WAIT = 1.0


class LspHost:
    def __init__(self, ls: AgentServer, session_id: str, root: Path) -> None:
        self._ls = ls
        self.session_id = session_id
        self._root = Path(root).resolve()
        self._disk = DiskHost(self._root)
        self.terminals = Terminals(ls, session_id, self._terminal_created)
        self.progress: TurnProgress | None = None  # set by the turn runner while a turn runs
        self._diagnostics = DiagnosticsClient(ls)

    @property
    def root(self) -> Path:
        return self._root

    # ----------------------------------------------------------------- files
    async def read_text(self, path: Path) -> str:
        text = self._ls.documents.current(path)
        return text if text is not None else await self._disk.read_text(path)

    async def read_window(self, path: Path, offset: int, limit: int, max_line_chars: int) -> TextWindow:
        text = self._ls.documents.current(path)
        if text is not None:
            return TextWindow.of_text(text, offset, limit, max_line_chars)
        return await self._disk.read_window(path, offset, limit, max_line_chars)

    async def write_text(self, path: Path, content: str, *, previous: str | None) -> WriteResult:
        ls = self._ls
        features = ls.features
        if not features.apply_edit:
            return await self._disk_write(path, content, previous)
        # A second edit before the editor reported the first: wait for its didChange (Neovim debounces it),
        # else send an unversioned edit against the text the server wrote, never a stale version.
        synced = await ls.documents.wait_synced(path, SYNC_WAIT)
        buffer = ls.documents.buffer(path)
        base = ls.documents.current(path)
        if base is None:
            base = await self._disk_text(path)
        creating = base is None
        uri = file_uri(path)
        if creating and not features.create_files:
            return await self._disk_write(path, content, previous)
        edits: list[types.TextEdit] = text_edits(base or "", content)
        if not edits and not creating:
            return WriteResult(True)
        version = buffer.version if buffer is not None and synced else None
        changes: list[Any] = []
        if creating:
            changes.append(types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=False,
                                                                                     ignore_if_exists=True)))
        if features.document_changes:
            ident = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            changes.append(types.TextDocumentEdit(text_document=ident, edits=list(edits)))
            edit = types.WorkspaceEdit(document_changes=changes)
        else:
            edit = types.WorkspaceEdit(changes={uri: edits})
        outcome = await self._apply(edit, f"the edit of {path.name}")
        if outcome.applied:  # reads see this text until the editor reports a newer version
            ls.documents.wrote(path, content, buffer.version if buffer is not None else None)
        return outcome

    async def delete_file(self, path: Path) -> WriteResult:
        ls = self._ls
        if not (ls.features.apply_edit and ls.features.delete_files):
            ls.documents.forget(path)
            return await self._disk.delete_file(path)
        edit = types.WorkspaceEdit(document_changes=[types.DeleteFile(
            uri=file_uri(path), options=types.DeleteFileOptions(ignore_if_not_exists=True))])
        outcome = await self._apply(edit, f"the deletion of {path.name}")
        if outcome.applied:
            ls.documents.forget(path)
        return outcome

    async def _apply(self, edit: types.WorkspaceEdit, what: str) -> WriteResult:
        timeout = self._ls.options.client_timeout
        params = types.ApplyWorkspaceEditParams(edit=edit, label="agentls")
        try:
            result = await self._ls.call(types.WORKSPACE_APPLY_EDIT, params, timeout)
        except TimeoutError:
            return WriteResult(False, f"the editor did not answer {what} in {timeout:g} s; it was not applied")
        except JsonRpcException as exc:
            return WriteResult(False, f"the editor could not apply {what}: {exc.message}")
        if isinstance(result, types.ApplyWorkspaceEditResult) and result.applied:
            return WriteResult(True)
        reason = getattr(result, "failure_reason", None)
        return WriteResult(False, f"{REJECTED} ({reason})" if reason else REJECTED)

    async def _disk_write(self, path: Path, content: str, previous: str | None) -> WriteResult:
        """The file is not in the editor (or the editor cannot edit): the disk, safely. The check against
        ``previous`` applies only when the server's view came from the disk, not from a buffer."""
        from_buffer = self._ls.documents.current(path) is not None
        self._ls.documents.forget(path)
        return await self._disk.write_text(path, content, previous=previous, check=not from_buffer)

    async def _disk_text(self, path: Path) -> str | None:
        try:
            return await self._disk.read_text(path)
        except (FileNotFoundError, NotADirectoryError):
            return None

    async def diagnostics(self, paths: Sequence[Path], *, settle: bool) -> dict[Path, list[Diagnostic]] | None:
        return await self._diagnostics.ask(self.session_id, paths, settle=settle)

    # ----------------------------------------------------------------- commands, permissions
    async def _terminal_created(self, tool_call_id: str, terminal_id: str) -> None:
        await self.send_update(events.tool_call_update(tool_call_id, content=[events.terminal_content(terminal_id)]))

    async def run_command(self, spec: CommandSpec) -> CommandResult:
        return await self.terminals.run(spec)

    async def request_permission(self, request: PermissionRequest) -> PermissionDecision | None:
        return await ask_permission(self._ls, self.session_id, request, self._root)

    async def release(self, task_id: str | None = None) -> None:
        await self.terminals.release_all()

    # ----------------------------------------------------------------- updates
    async def send_update(self, update: SessionUpdate) -> None:
        notice = events.sandbox_notice(update)
        if notice is not None:  # no sandbox works here: said once per session, to every client
            self._ls.show(types.MessageType.Warning, notice)
        progress = self.progress
        if progress is not None:
            progress.on_update(update)
        if self._ls.features.updates:
            params: dict[str, Any] = {"sessionId": self.session_id, "update": update}
            parent = ((update.get("_meta") or {}).get("agentls") or {}).get("parentToolCallId")
            if parent:  # a subagent's tool call (docs/protocol.md "agent/update")
                params["parentToolCallId"] = parent
            self._ls.notify("agent/update", params)
