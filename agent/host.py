"""The Host: everything a tool does to the outside world goes through it.

The core ships ``DiskHost`` (disk plus ``anyio.open_process``). The editor faces add hosts that
forward the same operations to the editor (``workspace/applyEdit``, ``fs/*``, ``terminal/*``,
permission prompts). Tool code never changes per editor.

Paths given to a host are absolute and already confined to ``root`` by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from .fileio import TextWindow
from .sandbox.policy import Confinement
from .types import SessionUpdate

PermissionOptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]


@dataclass(frozen=True)
class WriteResult:
    """What became of a write. ``applied=False`` carries a message for the model; ``applied=True`` may carry a
    note (e.g. hard links the write separated). ``conflict``: the file changed since ``previous`` was read, so
    nothing was written; read it again and redo the change."""

    applied: bool
    message: str | None = None
    conflict: bool = False


@dataclass(frozen=True)
class CommandSpec:
    command: str
    cwd: Path
    timeout: float
    output_limit: int
    tool_call_id: str
    task_id: str | None = None
    env: dict[str, str] | None = None
    # Variables an in-server command must not inherit (the model provider's API key).
    unset_env: tuple[str, ...] = ()
    # The OS sandbox for an in-server command (None: unconfined). The editor's terminal is the editor's:
    # nothing confines it, so with ``in_server`` (sandbox "strict") the host must run the command itself.
    sandbox: Confinement | None = None
    in_server: bool = False


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None
    output: str
    truncated: bool = False
    timed_out: bool = False
    signal: str | None = None
    terminal_id: str | None = None
    sandbox: str | None = None  # the mechanism that confined the command, None when nothing did


@dataclass(frozen=True)
class PermissionOption:
    option_id: str
    name: str
    kind: PermissionOptionKind


@dataclass(frozen=True)
class PermissionRequest:
    tool_call_id: str
    title: str
    kind: str
    raw_input: dict[str, object]
    options: tuple[PermissionOption, ...] = field(default_factory=tuple)
    # ACP ToolCallContent shown with the question, e.g. the diff of the edit being approved.
    content: tuple[dict[str, object], ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class PermissionDecision:
    """``option_id`` is one of the request's options, or ``"cancelled"``."""

    option_id: str

    @property
    def cancelled(self) -> bool:
        return self.option_id == "cancelled"


@runtime_checkable
class Host(Protocol):
    @property
    def root(self) -> Path:
        """The workspace root, resolved."""
        ...

    async def read_text(self, path: Path) -> str:
        """The file's current text (the editor's buffer when it is open). Raises FileNotFoundError."""
        ...

    async def read_window(self, path: Path, offset: int, limit: int, max_line_chars: int) -> TextWindow:
        """Lines ``offset..offset+limit-1`` (1-based) without reading the rest of a large file."""
        ...

    async def write_text(self, path: Path, content: str, *, previous: str | None) -> WriteResult:
        """Replace the file's text with ``content``. ``previous`` is the text the change was based on
        (``None``: the file is created); a host that can tell refuses with ``conflict=True`` when the file
        no longer holds it."""
        ...

    async def delete_file(self, path: Path) -> WriteResult:
        ...

    async def run_command(self, spec: CommandSpec) -> CommandResult:
        ...

    async def request_permission(self, request: PermissionRequest) -> PermissionDecision | None:
        """Ask the user. ``None`` means this host cannot ask; the approval policy decides."""
        ...

    async def send_update(self, update: SessionUpdate) -> None:
        ...

    async def release(self, task_id: str | None = None) -> None:
        """Release terminals owned by ``task_id`` (all of them when None)."""
        ...


DiagnosticSeverity = Literal["error", "warning", "information", "hint"]


@dataclass(frozen=True)
class Diagnostic:
    """One problem the editor shows in a file (from its language servers and linters)."""

    path: Path
    line: int  # 1-based
    column: int  # 1-based, UTF-16 code units as the editor counts them
    severity: DiagnosticSeverity
    message: str
    source: str | None = None  # "Pylance", "eslint"...
    code: str | None = None


@runtime_checkable
class DiagnosticsHost(Protocol):
    """The optional part of a host that can say what problems the editor sees (agent/diagnostics.py)."""

    async def diagnostics(self, paths: Sequence[Path], *, settle: bool) -> dict[Path, list[Diagnostic]] | None:
        """The editor's current problems in ``paths`` (absolute, confined), or None when the editor cannot
        tell (no client answers). ``settle``: a file was just edited, so let its language servers catch
        up briefly before answering."""
        ...
