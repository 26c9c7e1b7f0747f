"""Paths a small model gets wrong (agent/tools/path_repair.py), through real turns with the scripted provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.tools.path_repair import locate

from .conftest import GREET, AgentFactory, results


async def test_workspace_folder_name_in_front_is_dropped_and_said(make_agent: AgentFactory, srv: ScriptedServer,
                                                                  workspace: Path) -> None:
    srv.push(tools(call("read_file", {"path": "hello/greet.py"})),
             tools(call("edit_file", {"path": "hello/greet.py", "old_string": "Hello", "new_string": "Hi"})),
             text("done"))
    result = await make_agent().run_conversation("In greet.py, change Hello to Hi")
    read, edit = results(result)
    assert read.startswith("[path 'hello/greet.py' was taken as 'greet.py'") and "def greet" in read
    assert edit.startswith("[path 'hello/greet.py' was taken as 'greet.py'") and "Edited greet.py" in edit
    assert (workspace / "greet.py").read_text() == GREET.replace("Hello", "Hi")
    assert not (workspace / "hello").exists()  # no junk copy
    assert [c.path for c in result.files_changed] == ["greet.py"]


async def test_write_file_with_the_folder_name_creates_at_the_root(make_agent: AgentFactory, srv: ScriptedServer,
                                                                   workspace: Path) -> None:
    srv.push(tools(call("write_file", {"path": "hello/notes.txt", "content": "a note\n"})), text("done"))
    (out,) = results(await make_agent().run_conversation("write a note"))
    assert "was taken as 'notes.txt'" in out
    assert (workspace / "notes.txt").read_text() == "a note\n" and not (workspace / "hello").exists()


async def test_a_real_directory_named_like_the_workspace_wins(make_agent: AgentFactory, srv: ScriptedServer,
                                                              workspace: Path) -> None:
    (workspace / "hello").mkdir()
    srv.push(tools(call("write_file", {"path": "hello/new.py", "content": "x = 1\n"})), text("done"))
    (out,) = results(await make_agent().run_conversation("create it"))
    assert "taken as" not in out and (workspace / "hello" / "new.py").is_file()


async def test_unique_tail_resolves_and_ambiguous_or_unknown_lists_nearest(make_agent: AgentFactory,
                                                                          srv: ScriptedServer,
                                                                          workspace: Path) -> None:
    (workspace / "tests").mkdir()
    (workspace / "tests" / "util.py").write_text("# tests\n")
    srv.push(tools(call("read_file", {"path": "pkg/util.py"}), call("read_file", {"path": "config.toml"}),
                   call("read_file", {"path": "util.py"}), call("read_file", {"path": "gret.py"}),
                   call("read_file", {"path": "docs/nothing_like_it.md"})), text("done"))
    tail, name, ambiguous, typo, unknown = results(await make_agent().run_conversation("read"))
    assert "taken as 'src/pkg/util.py'" in tail and "return 42" in tail
    assert "taken as 'src/pkg/config.toml'" in name and "demo" in name
    assert ambiguous.startswith("error") and "src/pkg/util.py" in ambiguous and "tests/util.py" in ambiguous
    assert typo.startswith("error") and "greet.py" in typo  # the nearest existing path
    assert unknown.startswith("error") and "does not exist" in unknown


async def test_edit_of_a_missing_file_never_suggests_write_file(make_agent: AgentFactory, srv: ScriptedServer,
                                                                workspace: Path) -> None:
    srv.push(tools(call("edit_file", {"path": "greeter.py", "old_string": "Hello", "new_string": "Hi"})),
             text("done"))
    (out,) = results(await make_agent().run_conversation("edit"))
    assert out.startswith("error") and "write_file" not in out and "greet.py" in out
    assert sorted(p.name for p in workspace.iterdir()) == ["README.md", "greet.py", "src"]


@pytest.mark.parametrize("raw", ["../other/greet.py", "/etc/passwd", "~/greet.py", "/greet.py", "hello/../../x"])
async def test_confinement_still_holds(workspace: Path, raw: str) -> None:
    """Repairs never reach outside the root: escapes are refused as before; an absolute path is not repaired."""
    from agentls.agent.paths import OutsideWorkspace

    with pytest.raises(OutsideWorkspace):
        await locate(workspace, raw)


async def test_list_dir_and_search_accept_the_folder_name(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    srv.push(tools(call("list_dir", {"path": "hello"}), call("search_files", {"pattern": "helper", "path": "hello/src"})),
             text("done"))
    listing, found = results(await make_agent().run_conversation("look"))
    assert "greet.py" in listing and "src/pkg/util.py:1:def helper" in found


def _enum(body: dict[str, object], tool: str) -> object:
    schema = body["response_format"]["json_schema"]["schema"]  # type: ignore[index]
    for variant in schema["anyOf"]:
        if variant["properties"]["name"]["const"] == tool:
            return variant["properties"]["arguments"]["properties"]["path"].get("enum")
    raise AssertionError(tool)


async def test_json_mode_grammar_limits_paths_to_the_workspace_files(make_agent: AgentFactory, srv: ScriptedServer,
                                                                     workspace: Path) -> None:
    srv.push(text(json.dumps({"name": "read_file", "arguments": {"path": "greet.py"}})),
             text(json.dumps({"name": "final_answer", "arguments": {"text": "ok"}})))
    await make_agent(tool_mode="json").run_conversation("read greet.py")
    body = srv.requests[0].body
    files = ["README.md", "greet.py", "src/pkg/config.toml", "src/pkg/util.py"]
    assert sorted(_enum(body, "read_file")) == files and sorted(_enum(body, "edit_file")) == files  # type: ignore[arg-type]
    assert _enum(body, "write_file") is None  # new files may be created
    assert "config.toml" not in json.dumps(body["tools"])  # the grammar only: never prompt text


async def test_json_mode_grammar_leaves_paths_free_in_a_big_workspace(make_agent: AgentFactory, srv: ScriptedServer,
                                                                      workspace: Path) -> None:
    for i in range(201):
        (workspace / "src" / f"m{i}.py").write_text("")
    srv.push(text(json.dumps({"name": "final_answer", "arguments": {"text": "ok"}})))
    agent = make_agent(tool_mode="json")
    await agent.run_conversation("hi")
    assert _enum(srv.requests[0].body, "read_file") is None


async def test_json_mode_grammar_follows_files_the_turn_and_the_user_create(make_agent: AgentFactory,
                                                                             srv: ScriptedServer,
                                                                             workspace: Path) -> None:
    """The workspace is walked once per tool round (agent/tool_views.py), not once per model call, and again
    after a round or between turns: a file the model created can be read in its next step."""
    srv.push(text(json.dumps({"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}})),
             text(json.dumps({"name": "read_file", "arguments": {"path": "new.txt"}})),
             text(json.dumps({"name": "final_answer", "arguments": {"text": "ok"}})))
    agent = make_agent(tool_mode="json")
    await agent.run_conversation("make new.txt")
    assert "new.txt" not in _enum(srv.requests[0].body, "read_file")  # type: ignore[operator]
    assert "new.txt" in _enum(srv.requests[1].body, "read_file")  # type: ignore[operator]
    (workspace / "later.txt").write_text("by the user\n")
    srv.push(text(json.dumps({"name": "final_answer", "arguments": {"text": "ok"}})))
    await agent.run_conversation("and now?")
    assert "later.txt" in _enum(srv.requests[-1].body, "read_file")  # type: ignore[operator]
