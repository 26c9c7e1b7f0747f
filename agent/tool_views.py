"""What the model is shown of the tools: compact schemas for the small local model, the grammar's paths."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread

from .local.prompt import (
    VALIDATED_PARAMETERS,
    CompactSchemas,
    grammar_paths,
    hidden_tools,
    listed_files,
)
from .tools.base import Tool
from .tools.registry import ToolRegistry


class ToolViews:
    """``small_model``: the embedded local model gets compact schemas and a compact system prompt
    (agent/local/prompt.py). ``json_mode``: tool calls go through a JSON grammar, which can also rule out
    invented paths."""

    def __init__(self, registry: ToolRegistry, root: Path, *, small_model: bool, json_mode: bool,
                 system_prompt: Callable[[], str | None]) -> None:
        self.small_model = small_model
        self.json_mode = json_mode
        self._registry = registry
        self._root = root
        self._system_prompt = system_prompt
        self._compact = CompactSchemas()
        self._files: list[str] | None = None  # the workspace's files, walked once per tool round

    def schemas(self) -> list[dict[str, Any]]:
        """The tool schemas sent to the model."""
        full = self._registry.schemas()
        if not self.small_model:
            return full
        return self._compact.of(id(self._registry), self._registry.version, full, hidden_tools(self._system_prompt()))

    def parameters(self, tool: Tool) -> dict[str, Any]:
        """The parameters a call of ``tool`` is validated against: those the model was shown."""
        if self.small_model and tool.name in VALIDATED_PARAMETERS:
            return VALIDATED_PARAMETERS[tool.name]
        return tool.parameters

    async def grammar_paths(self) -> list[str] | None:
        """In tool_mode json, the workspace's files for the grammar's ``path`` enum (None when too many)."""
        if not self.json_mode:
            return None
        return grammar_paths(await self.workspace_files())

    async def workspace_files(self) -> list[str]:
        """The workspace's files (``listed_files``), walked again only after ``changed``."""
        if self._files is None:
            self._files = await anyio.to_thread.run_sync(listed_files, self._root)
        return self._files

    def changed(self) -> None:
        """A tool round ran (or a turn starts): files may have come or gone."""
        self._files = None
