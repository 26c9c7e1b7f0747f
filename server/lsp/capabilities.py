"""What the server announces at ``initialize``, and what it reads from the client's capabilities.

Standard library only: ``agentls lsp`` answers ``initialize`` from this module before pygls and
lsprotocol are imported (see ``boot.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..runtime.nested import nested

PROTOCOL_VERSION = 1

METHODS = (
    "agent/newSession", "agent/turn", "agent/steer", "agent/interrupt", "agent/compress",
    "agent/listSessions", "agent/loadSession", "agent/undo", "agent/listMcpServers", "agent/forkSession",
    "agent/rewind", "agent/setMode", "agent/deleteSession", "agent/listCommands",
)
UPDATE_KINDS = (
    "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan", "usage_update",
    "compaction_update", "session_info_update", "user_message_chunk", "available_commands_update",
    "current_mode_update",
)
# executeCommand names: the five of docs/protocol.md, plus the command the @agent code action runs.
COMMANDS = ("agent.turn", "agent.steer", "agent.interrupt", "agent.compress", "agent.newSession", "agent.codeAction")
CODE_ACTION_KIND = "refactor.rewrite"
POSITION_ENCODING = "utf-16"
INCREMENTAL = 2  # TextDocumentSyncKind.Incremental


def server_capabilities() -> dict[str, Any]:
    return {
        "positionEncoding": POSITION_ENCODING,
        "textDocumentSync": {"openClose": True, "change": INCREMENTAL, "save": {"includeText": False}},
        "executeCommandProvider": {"commands": list(COMMANDS)},
        "codeActionProvider": {"codeActionKinds": [CODE_ACTION_KIND], "resolveProvider": False},
        "experimental": {"agent": {"version": PROTOCOL_VERSION, "methods": list(METHODS),
                                   "updateKinds": list(UPDATE_KINDS)}},
    }


def initialize_result(version: str) -> dict[str, Any]:
    return {"capabilities": server_capabilities(), "serverInfo": {"name": "agentls", "version": version}}


@dataclass(frozen=True)
class ClientFeatures:
    """The client abilities the server's behaviour depends on (read from the raw ``capabilities``)."""

    agent_declared: bool = False  # capabilities.experimental.agent is present
    terminal: bool = False
    permissions: bool = False
    updates: bool = False
    diagnostics: bool = False  # the client answers agent/diagnostics
    apply_edit: bool = False
    document_changes: bool = False
    create_files: bool = False
    delete_files: bool = False
    work_done_progress: bool = False
    show_message_request: bool = False

    @classmethod
    def parse(cls, capabilities: Any) -> ClientFeatures:
        agent = nested(capabilities, "experimental", "agent")
        agent = agent if isinstance(agent, dict) else None
        operations = nested(capabilities, "workspace", "workspaceEdit", "resourceOperations")
        operations = operations if isinstance(operations, list) else []
        # A client that lists resource operations can only receive them as documentChanges (Neovim
        # declares the operations but not the flag, and applies documentChanges).
        document_changes = nested(capabilities, "workspace", "workspaceEdit", "documentChanges") is True \
            or bool(operations)
        return cls(
            agent_declared=agent is not None,
            terminal=bool(agent and agent.get("terminal") is True),
            permissions=bool(agent and agent.get("permissions") is True),
            updates=bool(agent and agent.get("updates") is True),
            diagnostics=bool(agent and agent.get("diagnostics") is True),
            apply_edit=nested(capabilities, "workspace", "applyEdit") is True,
            document_changes=document_changes,
            create_files=document_changes and "create" in operations,
            delete_files=document_changes and "delete" in operations,
            work_done_progress=nested(capabilities, "window", "workDoneProgress") is True,
            show_message_request=isinstance(nested(capabilities, "window", "showMessage"), dict),
        )
