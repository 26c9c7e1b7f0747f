"""Hostile workflow files and hooks: each gets a clear error, loses nothing, and never hangs the server."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.workflows import frontmatter
from agentls.agent.workflows.commands import CommandFiles
from agentls.agent.workflows.hook_process import run_hook
from agentls.agent.workflows.scan import MAX_FILES

from .conftest import Make, alive, hook_program, write

BOMB = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n" \
       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n---\nbody\n"


@pytest.mark.parametrize("front, problem", [
    (BOMB, "anchors or aliases"),
    ("---\n- a list\n---\nbody\n", "must be a mapping"),
    ("---\njust a string\n---\nbody\n", "must be a mapping"),
    ("---\ndescription:\n  - 1\n  - 2\n---\nbody\n", "'description' must be text"),
    ("---\ndescription: never closed\nbody\n", "never closed"),
    ("---\n" + "k: v\n" * 5000 + "---\nbody\n", "over 16 KB"),
    ("---\n" + "[" * 5000 + "\n---\nbody\n", "nested more than 32"),
    ("---\ndescription: only front matter\n---\n", "no body"),
])
def test_bad_front_matter_is_one_clear_problem(ws: Path, home: Path, front: str, problem: str) -> None:
    write(ws / ".claude/commands/bad.md", front)
    write(ws / ".claude/commands/ok.md", "fine\n")
    found, problems = CommandFiles(ws, home).load()
    assert list(found) == ["ok"] and len(problems) == 1
    assert "bad.md" in problems[0] and problem in problems[0], problems


def test_front_matter_split_keeps_the_body() -> None:
    assert frontmatter.split("---\ndescription: d\n---\n# Title\n---\nmore\n") == (
        {"description": "d"}, "# Title\n---\nmore\n")
    assert frontmatter.split("no front matter\n---\n") == ({}, "no front matter\n---\n")


def test_fifo_symlink_outside_and_binary_files_are_refused(ws: Path, home: Path, tmp_path: Path) -> None:
    folder = ws / ".agentls/commands"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "fifo.md")  # an open would block for ever
    outside = write(tmp_path / "outside.md", "SECRET outside the workspace\n")
    (folder / "leak.md").symlink_to(outside)
    (folder / "binary.md").write_bytes(b"\xff\xfe\x00garbage")
    write(folder / "inside-target.md", "inside\n")
    (folder / "alias.md").symlink_to(folder / "inside-target.md")
    (ws / ".claude").mkdir()
    (ws / ".claude/commands").symlink_to(tmp_path)  # the whole folder pointing outside
    found, problems = CommandFiles(ws, home).load()
    assert sorted(found) == ["alias", "inside-target"]
    text_ = "\n".join(problems)
    assert "FIFO" in text_ and "fifo.md" in text_
    assert "leak.md is a symlink to outside the workspace" in text_
    assert "binary.md is not UTF-8" in text_
    assert ".claude/commands: a symlink to outside the workspace" in text_
    assert not any("SECRET" in c.body for c in found.values())


def test_ten_thousand_command_files_are_capped_and_cached(ws: Path, home: Path) -> None:
    folder = ws / ".agentls/commands"
    folder.mkdir(parents=True)
    for i in range(10_000):
        (folder / f"c{i:05d}.md").write_text(f"command {i}\n")
    files = CommandFiles(ws, home)
    found, problems = files.load()
    assert len(found) == MAX_FILES and "c00000" in found
    assert any(f"only the first {MAX_FILES}" in p and "9500 are ignored" in p for p in problems)
    (folder / "c00001.md").write_text("changed\n")
    again, _ = files.load()
    assert again["c00000"] is found["c00000"]  # an unchanged file is not parsed again
    assert again["c00001"].body == "changed"


async def test_a_cancelled_turn_kills_its_hook(make: Make, srv: ScriptedServer, home: Path) -> None:
    pidfile = home / "hook.pid"
    hook = hook_program(home, "slow", f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(300)\n")
    write(home / "config.toml", f"[[hooks.PreToolUse]]\ncommand = {hook!r}\ntimeout = 600\n")
    agent = make()
    srv.push(tools(call("list_dir", {"path": "."})), text("never"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run_conversation, "go")
        with anyio.fail_after(20):
            while not pidfile.exists() or not pidfile.read_text():
                await anyio.sleep(0.02)
        tg.cancel_scope.cancel()
    pid = int(pidfile.read_text())
    with anyio.fail_after(10):
        while alive(pid):
            await anyio.sleep(0.02)


async def test_a_hook_that_cannot_start_or_ignores_stdin(tmp_path: Path) -> None:
    big = b"{" + b" " * (4 << 20) + b"}"  # more than a pipe holds: the hook never reads it
    run = await run_hook("echo quick", big, tmp_path, 10, {})
    assert run.exit_code == 0 and run.stdout.strip() == "quick"
    run = await run_hook("exit 3", b"{}", tmp_path / "missing-dir", 10, {})
    assert run.exit_code is None and run.error is not None and "could not be started" in run.error
