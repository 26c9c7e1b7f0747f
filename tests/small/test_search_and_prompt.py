"""search_files is smart-case; the local model's compact prompt (agent/local/prompt.py) is bounded and stable."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.local.prompt import CompactSchemas, compact_system_prompt, file_listing, listed_files
from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.tools.registry import ToolRegistry

from .conftest import AgentFactory, results


@pytest.mark.parametrize(("pattern", "hits"), [("hello", 2), ("Hello", 1), ("HELLO", 0), (r"\w+ello", 2),
                                                (r"\Shello", 1), (r"\bHello\b", 1)])
async def test_search_files_is_smart_case(make_agent: AgentFactory, srv: ScriptedServer, workspace: Path,
                                          pattern: str, hits: int) -> None:
    srv.push(tools(call("search_files", {"pattern": pattern})), text("done"))
    (out,) = results(await make_agent().run_conversation("search"))
    matched = [line for line in out.splitlines() if ":" in line and not line.startswith("no matches")]
    assert len(matched) == hits, out


def test_compact_prompt_is_deterministic_and_lists_files(workspace: Path) -> None:
    files = listed_files(workspace)
    one = compact_system_prompt(root=workspace, root_context="Use tabs.", extra=None, files=files)
    assert one == compact_system_prompt(root=workspace, root_context="Use tabs.", extra=None, files=files)
    assert "greet.py" in one and "src/pkg/util.py" in one and "Use tabs." in one
    assert "`hello/greet.py`" in one  # the rule names this workspace's own folder
    assert str(workspace) not in one  # no absolute path: the same project elsewhere shares the saved prompt


def test_listing_is_bounded(tmp_path: Path) -> None:
    for i in range(250):
        (tmp_path / f"f{i:03}.txt").write_text("")
    files = listed_files(tmp_path)
    assert len(files) == 201
    listing = file_listing(files)
    assert listing.count("\n") == 40 and listing.endswith("(and 161+ more)")


def test_compact_schemas_are_smaller_and_stable() -> None:
    registry = ToolRegistry()
    compact = CompactSchemas()
    schemas = compact.of(registry)
    assert schemas is compact.of(registry)  # byte-stable requests
    names = [s["function"]["name"] for s in schemas]
    assert "todo" not in names and "edit_file" in names
    read = next(s for s in schemas if s["function"]["name"] == "read_file")
    assert list(read["function"]["parameters"]["properties"]) == ["path"]
    assert len(str(schemas)) < len(str(registry.schemas())) / 2


async def test_commands_run_with_the_workspaces_venv_first_on_path(make_agent: AgentFactory, srv: ScriptedServer,
                                                                   workspace: Path) -> None:
    """The README's "Run the tests" example: ``pytest`` must be the project's, not a system one."""
    bindir = workspace / ".venv" / "bin"
    bindir.mkdir(parents=True)
    (workspace / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    tool = bindir / "pytest"
    tool.write_text("#!/bin/sh\necho project pytest \"$VIRTUAL_ENV\"\n")
    tool.chmod(0o755)
    srv.push(tools(call("terminal", {"command": "pytest -q"})), text("done"))
    (out,) = results(await make_agent(approval="yolo").run_conversation("run the tests"))
    assert f"project pytest {workspace / '.venv'}" in out, out


def test_list_dir_is_not_offered_when_the_prompt_lists_every_file(workspace: Path, tmp_path: Path) -> None:
    from agentls.agent.local.prompt import hidden_tools

    small = compact_system_prompt(root=workspace, root_context=None, extra=None, files=listed_files(workspace))
    for i in range(50):
        (tmp_path / f"f{i:02}.txt").write_text("")
    big = compact_system_prompt(root=tmp_path, root_context=None, extra=None, files=listed_files(tmp_path))
    assert hidden_tools(small) == {"list_dir"} and hidden_tools(big) == frozenset()
    registry = ToolRegistry()
    names = [s["function"]["name"] for s in CompactSchemas().of(registry, hidden_tools(small))]
    assert "list_dir" not in names and "read_file" in names
