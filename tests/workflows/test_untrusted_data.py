"""Data files and outputs nobody vetted (agent/data_files.py): whatever a parser raises on them (a YAML date that
is no date, a 5000-digit integer, nesting that exhausts the stack), that one input is skipped with a warning
naming it, and the session, the turn and every tool call go on (docs/workflows.md, "Problems")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.workflows import Workflows, skills
from agentls.agent.workflows.commands import CommandFiles

from .conftest import Make, hook_program, write

DEEP_TOML = "prompt = " + "[" * 5000 + "]" * 5000 + "\n"


@pytest.mark.parametrize("value", ["2001-02-30", "2001-12-14t21:59:43.10-99:00", "9" * 5000, "yes", "1e999"])
def test_front_matter_values_are_their_text(ws: Path, home: Path, value: str) -> None:
    write(ws / ".claude/commands/x.md", f"---\ndescription: {value[:1000]}\nnote: {value}\n---\nhello\n")
    write(ws / ".claude/skills/s/SKILL.md", f"---\nname: s\ndescription: {value[:1000]}\ndate: {value}\n---\nDo.\n")
    found, problems = CommandFiles(ws, home).load()
    loaded, skill_problems = skills.load(ws, home)
    assert problems == [] and skill_problems == []
    assert found["x"].description == loaded["s"].description == value[:1000]


def test_a_deeply_nested_toml_command_is_skipped_with_a_warning(ws: Path, home: Path) -> None:
    write(ws / ".gemini/commands/deep.toml", DEEP_TOML)
    write(ws / ".gemini/commands/ok.toml", 'prompt = "fine {{args}}"\ndescription = 2001-02-28\n')
    found, problems = CommandFiles(ws, home).load()
    assert list(found) == ["ok"] and found["ok"].description == "2001-02-28"
    assert len(problems) == 1 and "deep.toml: skipped: not valid TOML" in problems[0], problems


def test_hook_files_of_an_untrusted_workspace_are_not_parsed(ws: Path, home: Path) -> None:
    deep = '{"hooks":' + "[" * 100_000 + "]" * 100_000 + "}"
    write(ws / ".claude/settings.json", deep)
    write(ws / ".agentls.toml", "[[hooks.Stop]]\n" + DEEP_TOML)
    workflows = Workflows.from_config(ws, home / "config.toml", trusted=False)
    assert workflows.hooks.specs == []
    problems = workflows.problems()
    assert len(problems) == 1 and "untrusted workspace were not loaded" in problems[0]
    assert "settings.json" in problems[0] and ".agentls.toml" in problems[0]
    write(ws / ".claude/settings.json", '{"permissions": {"allow": []}}')  # no hooks: nothing to tell
    (ws / ".agentls.toml").unlink()
    assert Workflows.from_config(ws, home / "config.toml", trusted=False).problems() == []


def test_hook_files_of_a_trusted_workspace_that_cannot_be_parsed_are_told(ws: Path, home: Path) -> None:
    write(ws / ".claude/settings.json", '{"hooks":' + "[" * 100_000 + "]" * 100_000 + "}")
    write(ws / ".agentls.toml", "[[hooks.Stop]]\n" + DEEP_TOML)
    problems = Workflows.from_config(ws, home / "config.toml", trusted=True).problems()
    assert len(problems) == 2 and all("could not be read" in p and "nested too deeply" in p for p in problems)


async def test_a_hook_printing_deeply_nested_json_is_plain_output(make: Make, srv: ScriptedServer,
                                                                   home: Path) -> None:
    deep = hook_program(home, "deep", "print('{\"a\":' + '[' * 20000 + ']' * 20000 + '}')\n")
    write(home / "config.toml", f"[[hooks.PreToolUse]]\ncommand = {deep!r}\n[[hooks.UserPromptSubmit]]\n"
                                f"command = {deep!r}\n")
    agent = make()
    srv.push(tools(call("list_dir", {"path": "."})), text("done"))
    result = await agent.run_conversation("go")
    assert result.final_response == "done"
    messages = srv.requests[1].messages
    assert [m["role"] for m in messages[-2:]] == ["assistant", "tool"]
    assert "README.md" in str(messages[-1]["content"])


async def test_deeply_nested_tool_arguments_are_an_invalid_call(make: Make, srv: ScriptedServer) -> None:
    deep = '{"path": ".", "x": ' + "[" * 3000 + "]" * 3000 + "}"
    agent = make()
    srv.push(tools(call("list_dir", deep)), text("answered"), text("second"))
    result = await agent.run_conversation("go")
    assert result.final_response == "answered"
    tool_result = srv.requests[1].messages[-1]
    assert tool_result["role"] == "tool" and "not valid JSON" in str(tool_result["content"])
    await agent.run_conversation("again")
    roles = [m["role"] for m in srv.requests[2].messages if m["role"] != "system"]
    assert roles == ["user", "assistant", "tool", "assistant", "user"], roles
    json.dumps(srv.requests[2].messages)
