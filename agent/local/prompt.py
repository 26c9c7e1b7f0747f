"""A prompt sized for a small local model: a compact system prompt, compact tool schemas, the files.

The general system prompt and the tools' full descriptions are about 1,700 tokens, which a 2-core CPU
processes in 20-30 s before the first step. For the local model (``provider = "local"``) agentls
sends instead (bench/local_eval.py measures both):

- a system prompt of a few short rules that name the small model's usual mistakes, the project's
  instructions (``AGENTS.md``) and a bounded listing of the workspace's files as they were when the
  session began. Built once per session and stored like any system prompt: byte-stable, so llama.cpp's
  prompt cache (and the saved slot, agent/local/slots.py) covers it;
- tool schemas with one-line descriptions and no per-argument prose (the same names and arguments);
- in ``tool_mode = "json"``, the workspace's files as the grammar's ``enum`` for ``path`` (when there
  are at most ``MAX_GRAMMAR_FILES``), outside the prompt text.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..tools.base import Tool
from ..tools.described import ACCEPTED_EDIT, DESCRIBED_EDIT
from ..tools.path_repair import workspace_files

if TYPE_CHECKING:
    from ..tools.registry import ToolRegistry

MAX_LISTED_FILES = 40
ALL_FILES = "Files in the workspace (all of them):"  # then list_dir is not offered: the listing is complete
MAX_GRAMMAR_FILES = 200
MAX_CONTEXT_CHARS = 4000

_RULES = (
    "Look before you answer: read a file before you talk about it or change it.",
    "To change a file, use edit_file with its path and the change in words, for example "
    '{{"path": "app.py", "change": "set PORT to 8080"}}. Change only what the user asked.',
    "Use write_file only to create a new file.",
    "Run a command only when the user asks for it.",
    "If a tool call fails or is refused, say so. Never claim a change, an output or a result that no tool "
    "result showed you.",
    "When you are done, give a short final answer.",
)

def file_listing(files: Sequence[str], limit: int = MAX_LISTED_FILES) -> str:
    shown = list(files[:limit])
    more = len(files) - len(shown)
    text = "\n".join(shown) if shown else "(no files)"
    if more > 0:
        text += f"\n(and {more}{'+' if len(files) >= MAX_GRAMMAR_FILES + 1 else ''} more)"
    return text


STATIC_PART = ("You are agentls, a coding agent. You work in a workspace by calling tools, one call per reply.\n"
               + "\n".join(f"- {rule.format()}" for rule in _RULES))
WORKSPACE_HEAD = "The workspace is `"  # where the workspace's own part begins (``split_system``)


def compact_system_prompt(*, root: Path, root_context: str | None, extra: str | None, files: Sequence[str]) -> str:
    """The local model's system prompt: deterministic in its arguments. ``STATIC_PART`` first, the same for
    every workspace, then this workspace's part (``split_system``)."""
    sections = [STATIC_PART,
                f"{WORKSPACE_HEAD}{root.name}`. Paths are relative to its root: `greet.py`, not "
                f"`{root.name}/greet.py`.\n"
                + (f"{ALL_FILES}\n" if len(files) <= MAX_LISTED_FILES else "Files in the workspace:\n")
                + file_listing(files)]
    if root_context and root_context.strip():
        context = root_context.strip()
        if len(context) > MAX_CONTEXT_CHARS:
            context = context[:MAX_CONTEXT_CHARS] + "\n[... cut]"
        sections.append(f"Project instructions (from the repository; the user's requests come first):\n{context}")
    if extra and extra.strip():
        sections.append(extra.strip())
    return "\n\n".join(sections) + "\n"


def split_system(system: str) -> tuple[str, str] | None:
    """A compact system prompt as (the static part, the workspace's part), else None. The embedded model gets
    them as two system messages, so the chat template puts the tool schemas between them: the static part
    and the tools are the same tokens in every workspace, and a saved slot of any workspace covers them
    (agent/local/slots.py)."""
    head, sep, rest = system.partition("\n\n" + WORKSPACE_HEAD)
    return (head, WORKSPACE_HEAD + rest) if sep and head == STATIC_PART else None


def hidden_tools(system_prompt: str | None) -> frozenset[str]:
    """Tools not offered to the small model in this session: ``list_dir`` when the system prompt already lists
    every file (it otherwise lists the root and answers with the listing). Decided by the stored prompt, so it
    is the same for the whole session, resumed or not."""
    return frozenset({"list_dir"}) if system_prompt and ALL_FILES in system_prompt else frozenset()


def listed_files(root: Path) -> list[str]:
    """The workspace's files for the prompt's listing and the grammar: at most ``MAX_GRAMMAR_FILES + 1``."""
    return workspace_files(root, MAX_GRAMMAR_FILES + 1)


def grammar_paths(files: list[str]) -> list[str] | None:
    """The files (``listed_files``) for the grammar's ``path`` enum, or None when the workspace has too many."""
    return files if 0 < len(files) <= MAX_GRAMMAR_FILES else None


# Tools the small model is shown with other parameters than the registry's (its edits are said in words: the
# profile's ``described_edits``), and what its calls of them are validated against. Which arguments of the other
# tools it is offered, and their one-line descriptions, each tool says itself (``Tool.short``,
# ``Tool.small_arguments``, ``Tool.small_offered``).
SHOWN_PARAMETERS: dict[str, dict[str, Any]] = {"edit_file": DESCRIBED_EDIT}
VALIDATED_PARAMETERS: dict[str, dict[str, Any]] = {"edit_file": ACCEPTED_EDIT}


def _compact(tool: Tool) -> dict[str, Any] | None:
    if not tool.small_offered:
        return None
    out = copy.deepcopy(tool.schema())
    fn = out["function"]
    name = tool.name
    if tool.short:
        fn["description"] = tool.short
    if name in SHOWN_PARAMETERS:
        fn["parameters"] = copy.deepcopy(SHOWN_PARAMETERS[name])
    params = fn.get("parameters")
    if isinstance(params, dict):
        params.pop("additionalProperties", None)
        props = params.get("properties") or {}
        kept = tool.small_arguments
        if kept is not None and name not in SHOWN_PARAMETERS:
            props = {k: v for k, v in props.items() if k in kept}
            params["properties"] = props
            if "required" in params:
                params["required"] = [k for k in params["required"] if k in kept]
        for prop in props.values():
            if isinstance(prop, dict):
                prop.pop("description", None)
                items = prop.get("items")
                if isinstance(items, dict):
                    for sub in (items.get("properties") or {}).values():
                        if isinstance(sub, dict):
                            sub.pop("description", None)
    return out


class CompactSchemas:
    """The registry's schemas, compacted; the same list object while the registry is unchanged (byte-stable
    requests)."""

    def __init__(self) -> None:
        self._key: tuple[int, int, frozenset[str]] | None = None
        self._schemas: list[dict[str, Any]] = []

    def of(self, registry: ToolRegistry, hidden: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
        if self._key != (id(registry), registry.version, hidden):
            self._key = (id(registry), registry.version, hidden)
            self._schemas = [c for c in (_compact(t) for t in registry.tools())
                             if c is not None and c["function"]["name"] not in hidden]
        return self._schemas
