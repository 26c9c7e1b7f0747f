"""Rewind and undo refuse, alike, to lose a change nobody recorded: one made after the turns, between two of them,
or after a turn whose own write failed (docs/sessions.md "Fork, rewind, delete"). With and without a store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.agent.disk_host import DiskHost
from agentls.agent.host import WriteResult
from agentls.agent.rewind import RewindRefused
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import AgentFactory

STORED = pytest.mark.parametrize("stored", [True, False], ids=["sqlite", "memory"])


def _store(stored: bool, tmp_path: Path) -> dict[str, Any]:
    return {"session_db": tmp_path / "s.db"} if stored else {}


class FailingWrites(DiskHost):
    """The disk, except that the agent's writes fail while ``fail`` is set (as a client's fs/write_text_file can)."""

    fail = False

    async def write_text(self, path: Path, content: str, *, previous: str | None,
                         check: bool = True) -> WriteResult:
        if self.fail:
            return WriteResult(False, "the editor refused the write")
        return await super().write_text(path, content, previous=previous, check=check)


@STORED
async def test_rewinding_two_turns_at_once_keeps_an_edit_made_between_them(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, tmp_path: Path, stored: bool) -> None:
    b = workspace / "b.txt"
    b.write_text("v0\n")
    agent = make_agent(approval="yolo", **_store(stored, tmp_path))
    srv.push(tools(call("read_file", {"path": "b.txt"})),
             tools(call("write_file", {"path": "b.txt", "content": "v1 agent\n"})), text("one"),
             tools(call("read_file", {"path": "b.txt"})),
             tools(call("write_file", {"path": "b.txt", "content": "v1 agent\nUSER WORK\nv2 agent\n"})), text("two"))
    await agent.run_conversation("turn one")
    b.write_text("v1 agent\nUSER WORK\n")  # the user, between the turns
    await agent.run_conversation("turn two")
    before = len(agent.messages)

    with pytest.raises(RewindRefused) as refused:
        await agent.rewind(2)
    assert refused.value.conflicts == ["b.txt"] and "between" in str(refused.value)
    assert b.read_text() == "v1 agent\nUSER WORK\nv2 agent\n" and len(agent.messages) == before

    with pytest.raises(RewindRefused):  # undo goes by the same rule
        await agent.undo(2)
    assert b.read_text() == "v1 agent\nUSER WORK\nv2 agent\n"

    await agent.rewind(1)  # one turn is fine: the file holds what turn two left
    assert b.read_text() == "v1 agent\nUSER WORK\n"
    with pytest.raises(RewindRefused):
        await agent.rewind(1)
    assert (await agent.rewind(1, force=True)).files and b.read_text() == "v0\n"


@STORED
async def test_a_failed_write_does_not_turn_the_conflict_check_off(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, tmp_path: Path, stored: bool) -> None:
    c = workspace / "c.txt"
    c.write_text("orig\n")
    host = FailingWrites(workspace)
    agent = make_agent(approval="yolo", host=host, **_store(stored, tmp_path))
    srv.push(tools(call("read_file", {"path": "c.txt"})),
             tools(call("write_file", {"path": "c.txt", "content": "agent\n"})), text("the write failed"))
    host.fail = True
    await agent.run_conversation("write c")
    host.fail = False
    assert c.read_text() == "orig\n"
    c.write_text("orig\nUSER WORK\n")  # the agent never changed it; the user did

    for attempt in (lambda: agent.rewind(1), lambda: agent.undo(1)):
        with pytest.raises(RewindRefused) as refused:
            await attempt()
        assert refused.value.conflicts == ["c.txt"]
        assert c.read_text() == "orig\nUSER WORK\n"

    c.write_text("orig\n")  # as the failed turn found it: nothing to lose, and nothing to put back
    assert (await agent.rewind(1)).turns == 1 and c.read_text() == "orig\n"


@STORED
async def test_undo_refuses_to_overwrite_a_later_user_edit_unless_forced(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, tmp_path: Path, stored: bool) -> None:
    a = workspace / "a.txt"
    a.write_text("one\n")
    agent = make_agent(approval="yolo", **_store(stored, tmp_path))
    srv.push(tools(call("read_file", {"path": "a.txt"})),
             tools(call("write_file", {"path": "a.txt", "content": "agent\n"})), text("done"))
    await agent.run_conversation("write a")
    a.write_text("agent\nUSER WORK\n")

    with pytest.raises(RewindRefused) as refused:
        await agent.undo(1)
    assert refused.value.conflicts == ["a.txt"] and "undo with force" in str(refused.value)
    assert a.read_text() == "agent\nUSER WORK\n"
    assert await agent.undo(1, force=True) == ["a.txt"]  # the refusal used nothing up
    assert a.read_text() == "one\n"


@STORED
@pytest.mark.parametrize("editor", ["first note\n\n", "first note\r\n", "first note  \n", "first note"])
async def test_what_an_editor_changes_on_its_own_is_no_conflict(make_agent: AgentFactory, srv: ScriptedServer,
                                                                 workspace: Path, tmp_path: Path, stored: bool,
                                                                 editor: str) -> None:
    """A new file's buffer in Neovim holds one more empty line; editors save with CRLF, trim blanks or add
    a final newline. None of that is anyone's work: undo and rewind go ahead. A change of words still stops
    them."""
    agent = make_agent(approval="yolo", **_store(stored, tmp_path))
    note = workspace / "fresh.txt"
    for _ in range(2):
        srv.push(tools(call("write_file", {"path": "fresh.txt", "content": "first note\n"})), text("wrote"))
        await agent.run_conversation("write a note")
        note.write_bytes(editor.encode())
        assert await agent.undo(1) == ["fresh.txt"] and not note.exists()
    srv.push(tools(call("write_file", {"path": "fresh.txt", "content": "first note\n"})), text("wrote"))
    await agent.run_conversation("write a note")
    note.write_text("first note, and mine\n")
    with pytest.raises(RewindRefused):
        await agent.undo(1)
