"""Skills (agentskills.io SKILL.md): listed in the system prompt by name and description, the body only
through the ``skill`` tool or ``/<name>``; a user-level skill's files readable, exactly those."""

from __future__ import annotations

from pathlib import Path

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import Make, said, write

SKILL = """---
name: release-notes
description: Write release notes from the git log
license: MIT
allowed-tools: terminal read_file
---
# Release notes
SECRET-BODY-MARKER: group the commits by feature, then fixes.
"""


def _tool_text(agent: object, name: str) -> list[str]:
    return [str(m["content"]) for m in agent.messages if m.get("role") == "tool" and m.get("name") == name]  # type: ignore[attr-defined]


async def test_description_in_the_prompt_body_only_through_the_tool(make: Make, srv: ScriptedServer, ws: Path,
                                                                     home: Path) -> None:
    write(ws / ".agents/skills/release-notes/SKILL.md", SKILL)
    write(ws / ".agents/skills/release-notes/template.md", "## Features\n")
    write(home / "skills/tidy/SKILL.md", "---\nname: tidy\ndescription: Tidy imports\n---\nSort imports.\n")
    agent = make()
    srv.push(tools(call("skill", {"name": "release-notes"})), text("done"))
    await agent.run_conversation("write the release notes")
    first = srv.requests[0]
    assert "release-notes: Write release notes from the git log" in (first.system or "")
    assert "tidy: Tidy imports" in (first.system or "")
    assert "SECRET-BODY-MARKER" not in (first.system or "")
    assert not any("SECRET-BODY-MARKER" in str(m) for m in first.messages)
    assert "skill" in first.tools
    loaded = _tool_text(agent, "skill")[0]
    assert "SECRET-BODY-MARKER" in loaded and str(ws / ".agents/skills/release-notes/template.md") in loaded


async def test_slash_skill_is_a_user_message(make: Make, srv: ScriptedServer, ws: Path) -> None:
    write(ws / ".claude/skills/release-notes/SKILL.md", SKILL)
    agent = make()
    srv.push(text("ok"))
    await agent.run_conversation("/release-notes v2.0")
    sent = srv.requests[0].last_user_text or ""
    assert "SECRET-BODY-MARKER" in sent and sent.endswith("ARGUMENTS: v2.0")
    assert "SECRET-BODY-MARKER" not in (srv.requests[0].system or "")


async def test_user_skill_files_are_readable_and_nothing_else(make: Make, srv: ScriptedServer, home: Path,
                                                              tmp_path: Path) -> None:
    write(home / "skills/tidy/SKILL.md", "---\nname: tidy\ndescription: Tidy imports\n---\nSee rules.md\n")
    rules = write(home / "skills/tidy/rules.md", "RULES-MARKER\n")
    secret = write(home / "secret.txt", "SECRET\n")
    (home / "skills/tidy/link.md").symlink_to(secret)
    agent = make()
    srv.push(tools(call("read_file", {"path": str(rules)}), call("read_file", {"path": str(secret)}),
                   call("read_file", {"path": str(home / "skills/tidy/link.md")}),
                   call("read_file", {"path": str(home / "skills/tidy/../secret.txt")})), text("ok"))
    await agent.run_conversation("tidy")
    out = _tool_text(agent, "read_file")
    assert "RULES-MARKER" in out[0]
    assert all("SECRET" not in o and "refused" in o for o in out[1:]), out


async def test_malformed_skills_are_skipped_with_a_warning_naming_the_file(make: Make, srv: ScriptedServer,
                                                                           ws: Path) -> None:
    write(ws / ".agents/skills/escape/SKILL.md", "---\nname: ../../etc\ndescription: x\n---\nbody\n")
    write(ws / ".agents/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nbody\n")
    write(ws / ".agents/skills/list/SKILL.md", "---\n- a\n- b\n---\nbody\n")
    write(ws / ".agents/skills/good/SKILL.md", "---\nname: good\ndescription: Fine\n---\nbody\n")
    updates: list[dict[str, object]] = []
    agent = make(updates=updates)
    srv.push(tools(call("skill", {"name": "../../etc"})), text("ok"))
    await agent.run_conversation("hi")
    shown = said(updates)  # type: ignore[arg-type]
    for name in ("escape", "nodesc", "list"):
        assert f"{name}/SKILL.md" in shown
    assert "not a skill name" in shown and "needs a 'description'" in shown and "must be a mapping" in shown
    assert "- good: Fine" in (srv.requests[0].system or "")
    assert "no skill named" in _tool_text(agent, "skill")[0]


COLS = "---\nname: cols\ndescription: print first column\n---\nRun: awk '{print $1}' data.txt | sort | uniq -c\n" \
       "Only for: $ARGUMENTS\n"


async def test_slash_skill_keeps_its_instructions_and_appends_the_arguments(make: Make, srv: ScriptedServer,
                                                                            ws: Path) -> None:
    write(ws / ".agents/skills/cols/SKILL.md", COLS)
    agent = make()
    srv.push(text("one"), text("two"))
    await agent.run_conversation("/cols on file.csv")
    sent = srv.requests[0].last_user_text or ""
    assert "awk '{print $1}' data.txt" in sent  # never a command's $1
    assert "Only for: on file.csv" in sent  # $ARGUMENTS, as Claude Code substitutes it in skills
    assert sent.rstrip().endswith("ARGUMENTS: on file.csv")
    await agent.run_conversation("/cols")
    again = srv.requests[1].last_user_text or ""
    assert "awk '{print $1}' data.txt" in again and "ARGUMENTS:" not in again


def test_the_prompts_list_of_skills_is_capped(ws: Path, home: Path) -> None:
    from agentls.agent.workflows import Workflows
    from agentls.agent.workflows.skills import PROMPT_BYTES, PROMPT_DESCRIPTION

    for i in range(200):
        write(ws / f".agents/skills/s{i:03d}/SKILL.md", f"---\nname: s{i:03d}\ndescription: {'d' * 1000}\n---\nGo.\n")
    workflows = Workflows.from_config(ws, home / "config.toml", trusted=False)
    section = workflows.prompt_section() or ""
    assert len(section) < PROMPT_BYTES + 1000 and len(workflows.skills) == 200
    assert "- s000: " + "d" * (PROMPT_DESCRIPTION - 1) + "…" in section
    assert "more skills are not listed here" in section and "`skill` tool" in section


def test_symlinked_skill_and_command_folders_are_followed_inside_and_told_outside(ws: Path, home: Path,
                                                                                  tmp_path: Path) -> None:
    from agentls.agent.workflows import skills
    from agentls.agent.workflows.commands import CommandFiles

    write(ws / "shared/skills/inws/SKILL.md", "---\nname: inws\ndescription: shared\n---\nGo.\n")
    write(tmp_path / "outside/outs/SKILL.md", "---\nname: outs\ndescription: outside\n---\nGo.\n")
    write(ws / "shared/cmds/hello.md", "Hello\n")
    (ws / ".claude/skills").mkdir(parents=True)
    (ws / ".claude/skills/inws").symlink_to(ws / "shared/skills/inws")
    (ws / ".claude/skills/outs").symlink_to(tmp_path / "outside/outs")
    (ws / ".claude/commands").mkdir()
    (ws / ".claude/commands/team").symlink_to(ws / "shared/cmds")
    found, problems = skills.load(ws, home)
    assert list(found) == ["inws"]
    assert len(problems) == 1 and "outs: a symlinked folder pointing outside the workspace" in problems[0]
    commands, _ = CommandFiles(ws, home).load()
    assert "team:hello" in commands
