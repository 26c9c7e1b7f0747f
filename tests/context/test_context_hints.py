"""Subdirectory hints and command path extraction (docs/loop.md §6)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import anyio
import pytest

from agentls.agent.context.hints import HintTracker, paths_in_command

SECRET = "TOP-SECRET-OUTSIDE-INSTRUCTIONS"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with hint files at several depths and a secret AGENTS.md just outside it."""
    root = tmp_path / "ws"
    (root / "a" / "b").mkdir(parents=True)
    (root / "AGENTS.md").write_text("ROOT RULES")
    (root / "a" / "AGENTS.md").write_text("rules for a")
    (root / "a" / "b" / "AGENTS.md").write_text("rules for a/b")
    (root / "a" / "b" / "c.py").write_text("print('hi')\n")
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "AGENTS.md").write_text(SECRET)
    (outside / "deep" / "AGENTS.md").write_text(SECRET)
    return root


async def test_read_in_subdir_yields_outer_hints_once_outermost_first(ws: Path) -> None:
    tracker = HintTracker(ws)
    text = await tracker.hints_for([ws / "a" / "b" / "c.py"])
    assert text is not None
    assert text.index("[Project instructions from a/AGENTS.md]") < text.index(
        "[Project instructions from a/b/AGENTS.md]")
    assert "rules for a\n" in text and text.endswith("rules for a/b")
    assert "ROOT RULES" not in text  # the root is already in the system prompt
    assert await tracker.hints_for([ws / "a" / "b" / "c.py"]) is None
    assert await tracker.hints_for([ws / "a" / "b"]) is None


async def test_directory_and_new_file_paths(ws: Path) -> None:
    tracker = HintTracker(ws)
    text = await tracker.hints_for([ws / "a"])  # a directory: its own AGENTS.md
    assert text is not None and "a/AGENTS.md" in text and "a/b/AGENTS.md" not in text
    later = await tracker.hints_for([ws / "a" / "b" / "not_yet.py"])  # a file that does not exist yet
    assert later is not None and "a/b/AGENTS.md" in later and "rules for a\n" not in later


async def test_relative_paths_and_several_paths_in_one_call(ws: Path) -> None:
    tracker = HintTracker(ws)
    text = await tracker.hints_for([Path("a/b/c.py"), Path("a/b/c.py"), ws / "a"])
    assert text is not None and text.count("[Project instructions from") == 2


async def test_escapes_are_never_read(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (ws / "a" / "b" / "linked").symlink_to(outside / "deep", target_is_directory=True)
    (ws / "x").mkdir()
    (ws / "x" / "AGENTS.md").symlink_to(outside / "AGENTS.md")
    tracker = HintTracker(ws)
    probes = [
        ws / ".." / "outside" / "deep" / "f.py",
        Path("../outside/deep/f.py"),
        outside / "deep" / "f.py",
        Path("~/f.py"),
        ws / "a" / "b" / "linked" / "f.py",
        ws / "a" / "b" / "linked",
        ws / "x" / "f.py",
    ]
    texts = [await tracker.hints_for([p]) for p in probes]
    joined = "".join(t or "" for t in texts)
    assert SECRET not in joined
    assert "x/AGENTS.md" not in tracker.shown


async def test_cap_truncates_head_and_tail_and_logs(ws: Path, caplog: pytest.LogCaptureFixture) -> None:
    (ws / "a" / "AGENTS.md").write_text("HEAD-A " + "a" * 30_000 + " TAIL-A")
    (ws / "a" / "b" / "AGENTS.md").write_text("HEAD-B " + "b" * 30_000 + " TAIL-B")
    tracker = HintTracker(ws)
    with caplog.at_level(logging.WARNING, logger="agentls.hints"):
        text = await tracker.hints_for([ws / "a" / "b" / "c.py"])
    assert text is not None and len(text) < 32_200
    assert "HEAD-A" in text and text.endswith("TAIL-B") and "characters omitted" in text
    assert any("cut" in r.getMessage() and "characters removed" in r.getMessage() for r in caplog.records)


async def test_seed_from_a_resumed_transcript(ws: Path) -> None:
    first = HintTracker(ws)
    text = await first.hints_for([ws / "a" / "b" / "c.py"])
    assert text is not None
    transcript = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "1| print('hi')" + text},
    ]
    resumed = HintTracker(ws)
    resumed.seed_from(transcript)  # type: ignore[arg-type]
    assert resumed.shown == {"a/AGENTS.md", "a/b/AGENTS.md"}
    assert await resumed.hints_for([ws / "a" / "b" / "c.py"]) is None


async def test_concurrent_calls_show_a_file_once(ws: Path) -> None:
    tracker = HintTracker(ws)
    results: list[str | None] = []

    async def one() -> None:
        results.append(await tracker.hints_for([ws / "a" / "b" / "c.py"]))

    async with anyio.create_task_group() as tg:
        for _ in range(8):
            tg.start_soon(one)
    joined = "".join(r or "" for r in results)
    assert joined.count("[Project instructions from a/AGENTS.md]") == 1
    assert joined.count("[Project instructions from a/b/AGENTS.md]") == 1


async def test_empty_and_created_later(ws: Path) -> None:
    (ws / "a" / "AGENTS.md").write_text("   \n")
    (ws / "a" / "b" / "AGENTS.md").unlink()
    tracker = HintTracker(ws)
    assert await tracker.hints_for([ws / "a" / "b" / "c.py"]) is None
    (ws / "a" / "b" / "AGENTS.md").write_text("new rules")
    text = await tracker.hints_for([ws / "a" / "b" / "c.py"])
    assert text is not None and "new rules" in text


def test_paths_in_command(ws: Path, tmp_path: Path) -> None:
    root = ws.resolve()
    (ws / "tests").mkdir()
    got = paths_in_command("pytest -x tests a/b/c.py --maxfail=2 ../outside/AGENTS.md /etc/passwd", ws, ws)
    assert got == [root, root / "tests", root / "a" / "b" / "c.py"]
    assert paths_in_command("git clone git@github.com:o/r.git https://x.y/z a/new_dir/", ws, ws) == [
        root, root / "a" / "new_dir"]
    # Bare names count when they exist (their directory is the cwd anyway); redirections are parsed.
    assert paths_in_command("cat c.py > out.txt 2>../err.log", ws / "a" / "b", ws) == [
        root / "a" / "b", root / "a" / "b" / "c.py", root / "a" / "err.log"]
    # Bad quoting is tolerated; a cwd outside the root yields nothing; ~ is never expanded.
    assert paths_in_command("echo 'unterminated a/b", ws, ws) == [root, root / "a" / "b"]
    assert paths_in_command("ls", tmp_path / "outside", ws) == []
    assert paths_in_command("cat ~/.ssh/id_rsa PYTHONPATH=a/b", ws, ws) == [root, root / "a" / "b"]


def test_paths_in_command_ignores_symlink_escapes(ws: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside", ws / "out")
    assert paths_in_command("cat out/AGENTS.md", ws, ws) == [ws.resolve()]
