"""Custom slash commands from files (docs/workflows.md): where they are found, precedence, arguments."""

from __future__ import annotations

from pathlib import Path

from agentls.agent.scripted import ScriptedServer, text
from agentls.agent.workflows.commands import CommandFiles, markdown_expand, toml_expand

from .conftest import Make, said, write


def test_arguments_go_in_once_left_to_right() -> None:
    body = "Review $1 then $2. All: $ARGUMENTS. Missing: [$3]"
    assert markdown_expand(body, 'src/a.py "two words"') == \
        'Review src/a.py then two words. All: src/a.py "two words". Missing: []'
    # an argument that itself holds a placeholder stays as typed
    assert markdown_expand("Do: $ARGUMENTS / first: $1", "$1 and $ARGUMENTS") == "Do: $1 and $ARGUMENTS / first: $1"
    assert markdown_expand("No placeholders.", "extra words") == "No placeholders.\n\nARGUMENTS: extra words"
    assert markdown_expand("Quote $1", "'unbalanced") == "Quote 'unbalanced"
    assert toml_expand("Fix {{args}} now", "issue 7") == "Fix issue 7 now"
    assert toml_expand("Plan it.", "the parser") == "Plan it.\n\nthe parser"


def test_sources_names_and_precedence(ws: Path, home: Path) -> None:
    write(ws / ".agentls/commands/review.md", "---\ndescription: ours\nargument-hint: <file>\n---\nReview $1\n")
    write(ws / ".claude/commands/review.md", "---\ndescription: claude's\n---\nClaude review\n")
    write(ws / ".claude/commands/frontend/lint.md", "Lint the frontend: $ARGUMENTS\n")
    write(ws / ".gemini/commands/git/commit.toml", 'description = "Commit"\nprompt = "Write a commit for {{args}}"\n')
    write(home / "commands/review.md", "user review\n")
    write(home / "commands/mine.md", "---\nmodel: big\nallowed-tools: read_file, terminal\n---\n# Mine\nDo mine\n")
    found, problems = CommandFiles(ws, home).load()
    assert problems == []
    assert found["review"].description == "ours" and found["review"].hint == "<file>"
    assert found["review"].scope == "workspace"
    assert found["frontend:lint"].expand("x") == "Lint the frontend: x"
    assert found["git:commit"].expand("the fix") == "Write a commit for the fix"
    assert found["mine"].scope == "user" and found["mine"].description == "Mine"
    assert found["mine"].model == "big" and found["mine"].allowed_tools == ("read_file", "terminal")


def test_a_builtin_name_is_kept_and_said_once(ws: Path, home: Path) -> None:
    write(ws / ".claude/commands/compact.md", "not the real compact\n")
    files = CommandFiles(ws, home)
    found, problems = files.load()
    assert "compact" not in found
    assert len(problems) == 1 and "built-in" in problems[0] and "compact.md" in problems[0]


async def test_three_sources_expand_as_the_turns_user_message(make: Make, srv: ScriptedServer, ws: Path,
                                                              home: Path) -> None:
    write(ws / ".agentls/commands/review.md", "---\ndescription: Review a file\n---\nReview $1 carefully ($ARGUMENTS)\n")
    write(ws / ".claude/commands/explain.md", "Explain $ARGUMENTS simply\n")
    write(home / "commands/greet.md", "Say hello to $1\n")
    agent = make()
    for prompt, expected in (("/review src/a.py fast", "Review src/a.py carefully (src/a.py fast)"),
                             ("/explain the loop", "Explain the loop simply"), ("/greet Ada", "Say hello to Ada")):
        srv.push(text("ok"))
        await agent.run_conversation(prompt)
        assert srv.requests[-1].last_user_text == expected
    assert agent.messages[0]["content"] == "Review src/a.py carefully (src/a.py fast)"


async def test_a_new_file_counts_at_the_next_turn_and_a_path_is_not_a_command(make: Make, srv: ScriptedServer,
                                                                              ws: Path) -> None:
    agent = make()
    srv.push(text("ok"), text("ok"))
    await agent.run_conversation("/later now")
    assert srv.requests[-1].last_user_text == "/later now"
    write(ws / ".agentls/commands/later.md", "Later: $ARGUMENTS\n")
    await agent.run_conversation("/later now")
    assert srv.requests[-1].last_user_text == "Later: now"
    assert "later" in agent.workflows.commands  # type: ignore[union-attr]


async def test_a_bad_command_file_is_one_warning_and_the_rest_work(make: Make, srv: ScriptedServer,
                                                                  ws: Path) -> None:
    write(ws / ".claude/commands/bad.md", "---\n[unclosed\n---\nbody\n")
    write(ws / ".claude/commands/good.md", "Good $1\n")
    updates: list[dict[str, object]] = []
    agent = make(updates=updates)
    srv.push(text("ok"), text("ok"))
    await agent.run_conversation("/good one")
    await agent.run_conversation("/good two")
    assert srv.requests[-1].last_user_text == "Good two"
    shown = said(updates)  # type: ignore[arg-type]
    assert shown.count("bad.md") == 1 and "not valid YAML" in shown


def test_every_builtin_of_the_faces_is_reserved() -> None:
    from agentls.agent.workflows.commands import RESERVED
    from agentls.server.acp.commands import COMMANDS

    assert set(COMMANDS) <= RESERVED


# Claude Code's own examples (its slash-command docs), byte for byte: they load unchanged.
CLAUDE_COMMIT = """---
allowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)
argument-hint: [message]
description: Create a git commit
model: claude-3-5-haiku-20241022
---

## Context

- Current git status: !`git status`
- Current git diff (staged and unstaged changes): !`git diff HEAD`
- Current branch: !`git branch --show-current`
- Recent commits: !`git log --oneline -10`

## Your task

Based on the above changes, create a single git commit.
"""
CLAUDE_REVIEW_PR = """---
argument-hint: [pr-number] [priority] [assignee]
description: Review pull request
---

Review PR #$1 with priority $2 and assign to $3.
Focus on security, performance, and code style.
"""
CLAUDE_FIX_ISSUE = """---
argument-hint: [issue-number] [priority]
description: Fix issue with optional priority
---
Fix issue #$ARGUMENTS following our coding standards.
"""


def test_claude_codes_documented_examples_load_unchanged(ws: Path, home: Path) -> None:
    write(ws / ".claude/commands/commit.md", CLAUDE_COMMIT)
    write(ws / ".claude/commands/review-pr.md", CLAUDE_REVIEW_PR)
    write(ws / ".claude/commands/fix-issue.md", CLAUDE_FIX_ISSUE)
    found, problems = CommandFiles(ws, home).load()
    assert problems == [] and sorted(found) == ["commit", "fix-issue", "review-pr"]
    commit = found["commit"]
    assert (commit.hint, commit.description, commit.model) == ("[message]", "Create a git commit",
                                                               "claude-3-5-haiku-20241022")
    assert commit.allowed_tools == ("Bash(git add:*)", "Bash(git status:*)", "Bash(git commit:*)")
    assert found["review-pr"].hint == "[pr-number] [priority] [assignee]"
    assert found["review-pr"].expand("456 high alice").startswith("Review PR #456 with priority high and assign to "
                                                                  "alice.")
    assert found["fix-issue"].hint == "[issue-number] [priority]"
    assert found["fix-issue"].expand("123 high-priority") == "Fix issue #123 high-priority following our coding " \
                                                             "standards."
