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
from .profile import ModelProfile
from .tools.base import Tool
from .tools.registry import ToolRegistry


class ToolViews:
    """The tools as the profile (agent/profile.py) shows them: ``compact``, the small model's schemas (each
    tool's ``short`` description and ``small_arguments``, agent/local/prompt.py); ``json_tools``, calls through
    a JSON grammar, which can also rule out invented paths."""

    def __init__(self, registry: ToolRegistry, root: Path, profile: ModelProfile,
                 system_prompt: Callable[[], str | None]) -> None:
        self._profile = profile
        self._registry = registry
        self._root = root
        self._system_prompt = system_prompt
        self._compact = CompactSchemas()
        self._files: list[str] | None = None  # the workspace's files, walked once per tool round
        self._path_tools: tuple[int, tuple[str, ...]] | None = None

    def schemas(self) -> list[dict[str, Any]]:
        """The tool schemas sent to the model."""
        if not self._profile.compact:
            return self._registry.schemas()
        return self._compact.of(self._registry, hidden_tools(self._system_prompt()))

    def parameters(self, tool: Tool) -> dict[str, Any]:
        """The parameters a call of ``tool`` is validated against: those the model was shown."""
        if self._profile.described_edits and tool.name in VALIDATED_PARAMETERS:
            return VALIDATED_PARAMETERS[tool.name]
        return tool.parameters

    @property
    def path_tools(self) -> tuple[str, ...]:
        """The tools whose ``path`` names an existing file (the grammar's ``enum``: ``Tool.names_existing_file``)."""
        version = self._registry.version
        if self._path_tools is None or self._path_tools[0] != version:
            names = tuple(t.name for t in self._registry.tools() if t.names_existing_file)
            self._path_tools = (version, names)
        return self._path_tools[1]

    async def grammar_paths(self) -> list[str] | None:
        """In tool_mode json, the workspace's files for the grammar's ``path`` enum (None when too many)."""
        if not self._profile.json_tools:
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
