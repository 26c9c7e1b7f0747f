"""Each tool carries its own texts (agent/tools/base.py): the one-line description of a small model's compact
schema, its line in the system prompt, the arguments a small model is offered, whether its path must exist.
A built-in without them fails here, and a new tool's texts reach the prompt and the schemas by themselves."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agentls.agent.context.prompt import build_system_prompt
from agentls.agent.local.prompt import CompactSchemas
from agentls.agent.providers.json_format import build_response_format
from agentls.agent.tools.base import Tool
from agentls.agent.tools.files import READ_FILE
from agentls.agent.tools.registry import BUILTIN_TOOLS, ToolRegistry


@pytest.mark.parametrize("tool", BUILTIN_TOOLS, ids=[t.name for t in BUILTIN_TOOLS])
def test_every_builtin_tool_carries_its_short_description_and_guide(tool: Tool) -> None:
    assert tool.short and tool.short.endswith(".") and len(tool.short) <= 90, tool.name
    assert tool.guide is not None, f"{tool.name}: write its guide ('' when the schema says it all)"
    assert tool.guide == "" or f"`{tool.name}`" in tool.guide
    kept = tool.small_arguments or ()
    assert set(kept) <= set(tool.parameters.get("properties", {})), tool.name


def test_a_new_tools_texts_reach_the_prompt_and_the_compact_schema(tmp_path: Path) -> None:
    lint = replace(READ_FILE, name="lint", description="Run the linter on a file. " * 10, short="Lint a file.",
                   guide="Run `lint` after every change.", small_arguments=("path",))
    registry = ToolRegistry([*BUILTIN_TOOLS, lint])
    prompt = build_system_prompt(root=tmp_path, root_context=None, tool_names=registry.names, tools=registry.tools())
    assert "- Run `lint` after every change." in prompt
    # after the built-ins' guides, in the order of the built-ins
    assert prompt.index("`read_file`") < prompt.index("`edit_file` for") < prompt.index("`lint` after")
    shown = {s["function"]["name"]: s["function"] for s in CompactSchemas().of(registry)}
    assert shown["lint"]["description"] == "Lint a file." and list(shown["lint"]["parameters"]["properties"]) == \
        ["path"]
    silent = replace(lint, name="mystery", short=None, guide=None, small_arguments=None)
    registry.add(silent)
    mystery = next(s for s in CompactSchemas().of(registry) if s["function"]["name"] == "mystery")
    assert mystery["function"]["description"] == silent.description  # no short one: the full description
    # The grammar constrains the path of exactly the tools that say theirs names an existing file.
    grammar = build_response_format(registry.schemas(), paths=["a.py"], path_tools=["lint"])
    variants = {v["properties"]["name"]["const"]: v["properties"]["arguments"]
                for v in grammar["json_schema"]["schema"]["anyOf"]}
    assert variants["lint"]["properties"]["path"]["enum"] == ["a.py"]
    assert "enum" not in variants["read_file"]["properties"]["path"]
    assert ToolRegistry().tools() and [t.name for t in BUILTIN_TOOLS if t.names_existing_file] == \
        ["read_file", "edit_file"]
