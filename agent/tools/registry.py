"""The tool registry: the built-in set, lookup, and the schema snapshot sent to the model."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .base import Tool
from .diagnostics import DIAGNOSTICS, with_diagnostics
from .fetch import FETCH_URL
from .files import EDIT_FILE, READ_FILE, WRITE_FILE
from .listing import LIST_DIR, SEARCH_FILES
from .terminal import TERMINAL
from .todo import TODO

# Edits report the new problems they bring in, where the editor tells agentls its diagnostics.
BUILTIN_TOOLS: tuple[Tool, ...] = (READ_FILE, with_diagnostics(WRITE_FILE), with_diagnostics(EDIT_FILE), LIST_DIR,
                                   SEARCH_FILES, TERMINAL, DIAGNOSTICS, FETCH_URL, TODO)


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = BUILTIN_TOOLS) -> None:
        self._tools: dict[str, Tool] = {}
        self.version = 0
        for tool in tools:
            self.add(tool)
        self._snapshot: tuple[int, list[dict[str, Any]]] | None = None

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool
        self.version += 1

    def remove(self, name: str) -> None:
        if self._tools.pop(name, None) is not None:
            self.version += 1

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """The same list object while the registry is unchanged, so requests stay byte-identical."""
        if self._snapshot is None or self._snapshot[0] != self.version:
            self._snapshot = (self.version, [t.schema() for t in self._tools.values()])
        return self._snapshot[1]
