"""Per-turn undo: files come back as they were before the last N turns, with and without a store."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import AgentFactory


@pytest.mark.parametrize("stored", [True, False], ids=["sqlite", "memory"])
async def test_undo_restores_files_across_two_turns(make_agent: AgentFactory, srv: ScriptedServer,
                                                    workspace: Path, tmp_path: Path, stored: bool) -> None:
    app = workspace / "src" / "app.py"
    original = app.read_text()
    agent = make_agent(approval="yolo", **({"session_db": tmp_path / "s.db"} if stored else {}))
    srv.push(tools(call("read_file", {"path": "src/app.py"}),
                   call("edit_file", {"path": "src/app.py", "old_string": "hello", "new_string": "hi"})),
             tools(call("edit_file", {"path": "src/app.py", "old_string": "hi {name}", "new_string": "hey {name}"})),
             text("first turn done"),
             tools(call("write_file", {"path": "new.txt", "content": "fresh\n"}),
                   call("edit_file", {"path": "src/app.py", "old_string": "a + b", "new_string": "b + a"})),
             text("second turn done"))
    await agent.run_conversation("turn one")
    after_first = app.read_text()
    assert "hey {name}" in after_first
    await agent.run_conversation("turn two")
    assert (workspace / "new.txt").exists() and "b + a" in app.read_text()

    assert sorted(await agent.undo(1)) == ["new.txt", "src/app.py"]
    assert app.read_text() == after_first  # back to the state before turn two, not before its first edit
    assert not (workspace / "new.txt").exists()

    assert await agent.undo(1) == ["src/app.py"]
    assert app.read_text() == original
    assert await agent.undo(1) == []  # nothing left to undo


async def test_undo_two_turns_at_once_and_the_model_is_told(make_agent: AgentFactory, srv: ScriptedServer,
                                                            workspace: Path) -> None:
    readme = workspace / "README.md"
    original = readme.read_text()
    agent = make_agent(approval="yolo")
    srv.push(tools(call("write_file", {"path": "README.md", "content": "one\n"})), text("1"),
             tools(call("write_file", {"path": "README.md", "content": "two\n"})), text("2"), text("3"))
    await agent.run_conversation("a")
    await agent.run_conversation("b")
    assert await agent.undo(2) == ["README.md"]
    assert readme.read_text() == original
    await agent.run_conversation("c")
    assert "undid the file changes of the last 2 turn(s)" in (srv.requests[-1].last_user_text or "")
