"""The workspace's config files with which agentls starts programs in a later session (hooks in
``.agentls.toml`` and ``.claude/settings.json``, servers in ``.mcp.json``, read when the user trusts the
workspace's config) cannot be created or changed by a sandboxed command: read-only under bubblewrap when
they exist, and put back or taken away by the undo step after each command (real bwrap or Landlock)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.sandbox import plants
from agentls.agent.sandbox.policy import BUBBLEWRAP, Confinement

from .conftest import run

HOOK = '[[hooks.UserPromptSubmit]]\\ncommand = "touch {marker}"\\n'
SERVER = '{{"mcpServers": {{"x": {{"command": "sh", "args": ["-c", "touch {marker}"]}}}}}}'


async def test_a_command_cannot_create_or_change_the_config_agentls_runs_programs_from(
        sandbox: Confinement, workspace: Path, outside: Path) -> None:
    marker = outside / "ran"
    (workspace / ".agentls.toml").write_text('model = "x"\n')
    (workspace / ".claude").mkdir()
    (workspace / ".claude/settings.json").write_text("{}\n")
    was = plants.before(workspace)
    result = await run(f"printf '{HOOK}' >> .agentls.toml; echo '{SERVER}' > .mcp.json; "
                       f"echo '{SERVER}' > .claude/settings.json; true".format(marker=marker), workspace, sandbox)
    notes = plants.undo(workspace, was)
    assert (workspace / ".agentls.toml").read_text() == 'model = "x"\n', (result.output, notes)
    assert (workspace / ".claude/settings.json").read_text() == "{}\n", (result.output, notes)
    assert not (workspace / ".mcp.json").exists(), notes
    assert any("removed .mcp.json, which the command created" in n for n in notes), notes
    if sandbox.mechanism == BUBBLEWRAP:
        assert "Read-only file system" in result.output, result.output  # the existing ones are read-only
    else:
        assert any("put back .agentls.toml" in n for n in notes), notes


async def test_a_claude_folder_made_a_link_is_moved_aside(sandbox: Confinement, workspace: Path) -> None:
    was = plants.before(workspace)
    result = await run(f"mkdir -p elsewhere && echo '{SERVER}' > elsewhere/settings.json && ln -s elsewhere .claude"
                       .format(marker="/nowhere"), workspace, sandbox)
    assert result.exit_code == 0, result.output
    notes = plants.undo(workspace, was)
    assert not (workspace / ".claude").exists() and (workspace / ".claude.agentls-removed").is_symlink(), notes


def test_what_the_command_left_alone_is_not_touched(workspace: Path) -> None:
    (workspace / ".mcp.json").write_text("{}\n")
    (workspace / ".claude").mkdir()
    (workspace / ".claude/settings.json").write_text("{}\n")
    assert plants.undo(workspace, plants.before(workspace)) == []
    assert (workspace / ".mcp.json").exists() and (workspace / ".claude/settings.json").exists()


@pytest.mark.parametrize("name", [".mcp.json", ".agentls.toml"])
def test_the_undo_step_alone_puts_back_a_changed_one(workspace: Path, name: str) -> None:
    (workspace / name).write_text("mine\n")
    was = plants.before(workspace)
    (workspace / name).unlink()
    (workspace / name).symlink_to("/etc/passwd")
    notes = plants.undo(workspace, was)
    assert (workspace / name).read_text() == "mine\n" and not (workspace / name).is_symlink(), notes
