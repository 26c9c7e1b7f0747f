"""What the model is shown of the tools: compact schemas for the small local model, the grammar's paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio.to_thread

from agentls.agent.local.prompt import CompactSchemas
from agentls.agent.tools.registry import ToolRegistry


class ToolViews:
    """A mixin of ``AIAgent``."""

    provider_name: str
    tool_mode: str | None
    registry: ToolRegistry
    root: Path
    _compact: CompactSchemas
    system_prompt: str | None

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tool schemas sent to the model: compact ones for the small local model (agent/local/prompt.py)."""
        full = self.registry.schemas()
        if self.provider_name != "local":
            return full
        from agentls.agent.local.prompt import hidden_tools

        return self._compact.of(id(self.registry), self.registry.version, full, hidden_tools(self.system_prompt))

    @property
    def json_tool_mode(self) -> bool:
        return (self.tool_mode or ("json" if self.provider_name == "local" else "native")) == "json"

    async def grammar_paths(self) -> list[str] | None:
        """In tool_mode json, the workspace's files for the grammar's ``path`` enum (None when too many)."""
        if not self.json_tool_mode:
            return None
        from agentls.agent.local.prompt import grammar_paths

        return await anyio.to_thread.run_sync(grammar_paths, self.root)
