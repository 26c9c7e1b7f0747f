"""What a tool is, what it gets to work with, and what it gives back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..host import Host
from ..profile import GENERAL, ModelProfile
from .reads import ReadLedger
from ..sandbox.session import CommandSandbox
from ..types import SessionUpdate, Usage

JsonObject = dict[str, Any]


class ToolFailure(Exception):
    """An expected failure the model should read as an error result (bad path, no match...)."""


@dataclass
class ToolOutput:
    text: str
    is_error: bool = False
    content: list[dict[str, Any]] = field(default_factory=list)  # ACP ToolCallContent for the editor
    locations: list[dict[str, Any]] = field(default_factory=list)
    raw_output: Any = None
    # Image parts (``image_url``) for the model: a provider that takes images in tool results sends them
    # beside ``text``; the others send ``text`` alone (which should say an image was there).
    images: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage | None = None  # tokens the tool's own model calls spent (subagents): added to the turn's




class Rewrite(Protocol):
    """An instruction, as a tool result -> the model's reply to it (at the rewrite's temperature unless
    ``temperature`` is given)."""

    async def __call__(self, instruction: str, *, temperature: float | None = None) -> str: ...



@dataclass
class ToolContext:
    host: Host
    root: Path
    session_id: str
    task_id: str | None
    tool_call_id: str
    settings_terminal_timeout: float
    output_limit: int
    # (title, action, raw_input, key, dangerous, content) -> None when allowed, else the refusal for the model.
    ask_permission: Callable[[str, str, JsonObject, str, bool, list[dict[str, Any]]], Awaitable[str | None]]
    # Records a file's content before this turn's first edit to it (for undo).
    checkpoint: Callable[[Path, str | None], Awaitable[None]]
    send_update: Callable[[SessionUpdate], Awaitable[None]]
    set_plan: Callable[[list[JsonObject]], None]
    # Environment variables commands must not see (the provider keys), see ToolRunner.secret_env.
    secret_env: tuple[str, ...] = ()
    # The session's OS sandbox for commands (None: commands run unconfined).
    sandbox: CommandSandbox | None = None
    # The files this turn's edits changed (shared by the turn's tool calls; the diagnostics tool reads it).
    edited: list[Path] = field(default_factory=list)
    # What the model has read this session (read before overwrite: agent/tools/reads.py); None: no rule.
    reads: ReadLedger | None = None
    # Told the new content of each file an edit changed (the turn's outcome record: agent/outcome.py).
    changed: Callable[[Path, str | None], None] | None = None
    # The model's profile (agent/profile.py). ``guarded_writes`` (a small model, docs/loop.md §9.7): an edit that
    # would leave a parsable .py file unparsable is refused, and so is a write_file that looks like a fragment.
    profile: ModelProfile = GENERAL
    # A small model's edit_file {path, change} (agent/tools/described.py): asks the model, as this call's result,
    # for the new text (one more model call on the same transcript) and returns its reply. None: not offered.
    rewrite: Rewrite | None = None
    request: str = ""  # the user's request of this turn (for the rewrite's instruction)
    # Switches the session's approval mode (exit_plan, agent/plan_mode.py); None where it cannot.
    set_mode: Callable[[str], None] | None = None
    # The text of a file outside the workspace read_file may read (a user-level skill's), else None
    read_outside: Callable[[object], Awaitable[str | None]] | None = None
    mode: Callable[[], str] | None = None  # the session's approval mode now


Runner = Callable[[ToolContext, JsonObject], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: JsonObject
    kind: str  # ACP ToolKind: read, edit, search, execute, think, other...
    run: Runner
    read_only: bool = False
    # Changes nothing although it is not ``read_only`` (which also lets calls run side by side): it runs in plan
    # mode (fetch_url, todo; delegate_task with read-only children). See permissions.runs_in_plan_mode.
    plan_safe: bool = False
    # Paths the call touches (for hints, batching and the editor's follow-along), relative or absolute.
    paths: Callable[[JsonObject], Sequence[str]] = lambda args: ()
    title: Callable[[JsonObject], str] = lambda args: ""
    timeout: float | None = 120.0  # None: the tool manages its own time limit
    # How the tool reads to the model besides its schema (docs/architecture.md, "Tools"). Every built-in sets
    # ``short`` and ``guide`` (tests/core/test_tool_texts.py); a tool without them is shown to a small model with
    # its full description and has no line in the system prompt.
    short: str | None = None  # the one-line description of a small model's compact schema
    guide: str | None = None  # its line in the system prompt's "How to work" ("": none, the schema says it all)
    small_arguments: tuple[str, ...] | None = None  # the arguments a small model is offered (None: all)
    small_offered: bool = True  # offered to a small model at all
    names_existing_file: bool = False  # its ``path`` names an existing file (the grammar's enum, tool_mode json)

    def schema(self) -> JsonObject:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}
