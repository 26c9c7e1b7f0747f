"""docs/loop.md §8.2: resuming a session whose last run crashed (kill -9) leaves a valid transcript in the store.

A crash in the middle of a tool round leaves calls without results; the load repairs the transcript and
saves the repair, once, so every later reader (another process, ``agentls run --session``, a raw load)
sees a valid transcript. A session another process is running a turn on is only repaired in memory: its
open tail is that turn's, and it is saved when this process next takes the lease. A crash before any answer
leaves the prompt last: it is kept, and a placeholder answer is saved after it, so the next prompt is never
a second user message in a row.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.agent import AIAgent
from agentls.agent.scripted import Reply, ScriptedServer, call, text, tools
from agentls.agent.sessions import SessionStore
from agentls.agent.transcript import MISSING_RESULT, STOPPED_UNANSWERED, violations
from agentls.agent.types import Message

CHILD = Path(__file__).with_name("turn_child.py")
ROOT = Path(__file__).resolve().parents[2]
SID = "resumed"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("one\ntwo\n")
    return ws


async def crash_a_turn(srv: ScriptedServer, db: Path, ws: Path, prompt: str, *,
                       kill_at_request: int | None = None) -> list[str]:
    """Run one turn in a child process until it dies by SIGKILL: on its own when the agent asks to write a file,
    or killed here once the provider got request number ``kill_at_request``. Returns the child's output lines."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, str(CHILD), str(db), SID, srv.openai_url, str(ws), prompt,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT)
    try:
        if kill_at_request is not None:
            for _ in range(3000):
                if len(srv.requests) >= kill_at_request or child.returncode is not None:
                    break
                await asyncio.sleep(0.01)
            child.send_signal(signal.SIGKILL)
        out, err = await asyncio.wait_for(child.communicate(), 60)
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    assert child.returncode == -signal.SIGKILL, err.decode()
    return out.decode().splitlines()


async def stored(db: Path) -> list[Message]:
    """What another reader of the file gets: a fresh connection, no repair."""
    async with SessionStore(db) as store:
        return await store.load_messages(SID)


def stored_rows(db: Path) -> tuple[int, int]:
    """(active rows, archived rows) of the session, read with the sqlite3 module."""
    with contextlib.closing(sqlite3.connect(db)) as raw:
        active, archived = raw.execute("SELECT count(*) - sum(archived), sum(archived) FROM messages "
                                       "WHERE session_id = ?", (SID,)).fetchone()
    return int(active), int(archived)


@pytest.fixture
async def made(srv: ScriptedServer, workspace: Path) -> AsyncIterator[list[AIAgent]]:
    made: list[AIAgent] = []
    yield made
    for agent in made:
        await agent.close()


def resume(srv: ScriptedServer, db: Path | SessionStore, ws: Path, made: list[AIAgent], wire: str = "openai") -> AIAgent:
    url = srv.openai_url if wire == "openai" else srv.anthropic_url
    agent = AIAgent(model="m", base_url=url, provider=wire, api_key="k", session_db=db,
                    session_id=SID, workspace=ws, titles="prompt", max_retries=0)
    made.append(agent)
    return agent


def calls_and_results(messages: list[Message]) -> tuple[list[str], list[str]]:
    calls = [c["id"] for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
    results = [str(m.get("tool_call_id")) for m in messages if m.get("role") == "tool"]
    return calls, results


async def test_a_crash_mid_round_is_repaired_once_and_the_repair_saved(
        srv: ScriptedServer, workspace: Path, tmp_path: Path, made: list[AIAgent]) -> None:
    db = tmp_path / "sessions.db"
    srv.push(tools(call("read_file", {"path": "notes.txt"}, id="c1"), call("write_file", {"path": "new.txt",
                                                                                          "content": "x\n"}, id="c2")))
    lines = await crash_a_turn(srv, db, workspace, "first")
    assert "asked c2" in lines, lines
    crashed = await stored(db)
    assert [m["role"] for m in crashed] == ["user", "assistant", "tool"], crashed  # c1 saved, c2 never ran
    assert violations(crashed) != []

    agent = resume(srv, db, workspace, made)
    await agent.__aenter__()
    repaired = await stored(db)
    assert violations(repaired) == [], violations(repaired)
    assert repaired == agent.messages
    assert calls_and_results(repaired) == (["c1", "c2"], ["c1", "c2"])
    assert repaired[-1]["content"] == MISSING_RESULT and repaired[2]["content"] != MISSING_RESULT
    assert stored_rows(db) == (4, 0)  # the missing result appended: nothing rewritten, nothing twice

    again = resume(srv, db, workspace, made)  # a second reader finds nothing to repair, writes nothing
    await again.__aenter__()
    assert again.messages == repaired and stored_rows(db) == (4, 0)

    srv.push(text("all good"))
    result = await agent.run_conversation("second")
    assert result.completed and violations(result.messages) == []
    after = await stored(db)
    assert after == result.messages[1:] and violations(after) == []
    assert [m["role"] for m in after] == ["user", "assistant", "tool", "tool", "user", "assistant"]
    sent = srv.requests[-1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert srv.requests[-1].rejected is None


async def test_a_session_running_elsewhere_is_repaired_in_memory_only_then_saved_by_the_next_turn(
        srv: ScriptedServer, workspace: Path, tmp_path: Path, made: list[AIAgent]) -> None:
    """Another live process holds the lease: its tail is its own turn's, not a crash. Nothing is written;
    the transcript is loaded again and the repair saved when this process runs a turn."""
    db = tmp_path / "sessions.db"
    async with SessionStore(db) as other:
        await other.create_session(session_id=SID, cwd=str(workspace), model="m", system_prompt="p")
        await other.append_messages(SID, [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}], turn=1)
        await other.acquire_lease(SID)
        agent = resume(srv, db, workspace, made)
        await agent.__aenter__()
        assert violations(agent.messages) == []  # shown valid
        assert len(await stored(db)) == 2  # but the other process's rows are left alone
        await other.release_lease(SID)
    srv.push(text("answer"))
    result = await agent.run_conversation("second")
    assert result.completed
    after = await stored(db)
    assert violations(after) == [] and after == result.messages[1:]
    assert calls_and_results(after) == (["c1"], ["c1"])


async def test_a_broken_middle_is_rewritten_without_duplicates(
        srv: ScriptedServer, workspace: Path, tmp_path: Path, made: list[AIAgent]) -> None:
    """Rows an older version left broken inside the transcript (two prompts in a row, a result twice, a
    result without its call): the repaired transcript replaces them; the old rows are archived, not active."""
    db = tmp_path / "sessions.db"
    calls = [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]
    async with SessionStore(db) as store:
        await store.create_session(session_id=SID, cwd=str(workspace), model="m", system_prompt="p")
        await store.append_messages(SID, [
            {"role": "user", "content": "one"}, {"role": "user", "content": "two"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "r"},
            {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "r again"},
            {"role": "tool", "tool_call_id": "zz", "name": "read_file", "content": "orphan"},
            {"role": "assistant", "content": "done"}], turn=1)
    agent = resume(srv, db, workspace, made)
    await agent.__aenter__()
    repaired = await stored(db)
    assert violations(repaired) == [] and repaired == agent.messages
    assert [m["role"] for m in repaired] == ["user", "assistant", "tool", "assistant"]
    assert repaired[0]["content"] == "one\n\ntwo" and repaired[2]["content"] == "r"
    assert stored_rows(db) == (4, 7)



def without_ids(messages: list[Any]) -> list[Any]:
    """The messages without the ids a fork names (``meta.messageId``: a new one every run)."""
    out = []
    for m in messages:
        meta = {k: v for k, v in (m.get("meta") or {}).items() if k != "messageId"}
        out.append({**{k: v for k, v in m.items() if k != "meta"}, **({"meta": meta} if meta else {})})
    return out

@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_a_crash_before_any_answer_keeps_the_prompt_and_saves_a_placeholder_answer(
        srv: ScriptedServer, workspace: Path, tmp_path: Path, made: list[AIAgent], wire: str) -> None:
    """Killed while the model was thinking about the prompt: the prompt stays (the user sees what went
    unanswered), a placeholder answer is saved after it, and the next prompt is not a second user message."""
    db = tmp_path / "sessions.db"
    srv.push(text("never sent", latency=60))
    await crash_a_turn(srv, db, workspace, "first prompt", kill_at_request=1)
    assert [(m["role"], m["content"]) for m in await stored(db)] == [("user", "first prompt")]

    agent = resume(srv, db, workspace, made, wire)
    await agent.__aenter__()
    expected = [{"role": "user", "content": "first prompt"},
                {"role": "assistant", "content": STOPPED_UNANSWERED, "meta": {"placeholder": True}}]
    assert without_ids(agent.messages) == expected
    assert without_ids(await stored(db)) == expected  # saved: every later reader gets it
    srv.clear()
    srv.push(text("answered"))
    result = await agent.run_conversation("second prompt")
    assert result.completed and violations(result.messages) == []
    request = srv.requests[-1]
    assert request.rejected is None
    roles = [m["role"] for m in request.messages if m["role"] != "system"]
    assert roles == ["user", "assistant", "user"], request.messages
    assert request.last_user_text == "second prompt"
    assert [m["role"] for m in await stored(db)] == ["user", "assistant", "user", "assistant"]
    assert stored_rows(db) == (4, 0)


async def test_an_unanswered_steer_is_closed_too(srv: ScriptedServer, workspace: Path, tmp_path: Path,
                                                 made: list[AIAgent]) -> None:
    """The last saved row is a steer (a crash after it was saved, before the model answered it)."""
    db = tmp_path / "sessions.db"
    async with SessionStore(db) as store:
        await store.create_session(session_id=SID, cwd=str(workspace), model="m", system_prompt="p")
        await store.append_messages(SID, [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "r"},
            {"role": "user", "content": "and the tests too", "meta": {"steer": True}}], turn=1)
    agent = resume(srv, db, workspace, made)
    await agent.__aenter__()
    saved = await stored(db)
    assert saved[-2]["content"] == "and the tests too" and saved[-1]["content"] == STOPPED_UNANSWERED
    assert violations(saved) == [] and stored_rows(db) == (5, 0)


async def test_a_prompt_another_process_is_answering_is_not_closed(
        srv: ScriptedServer, workspace: Path, tmp_path: Path, made: list[AIAgent]) -> None:
    """A second process loads the session while the first waits for the model: the prompt is not a crash.
    Nothing is added, in memory or in the store; the first turn ends normally; the second process's next
    turn loads its answer first."""
    db = tmp_path / "sessions.db"
    async with SessionStore(db) as first_store, SessionStore(db) as second_store:
        first = resume(srv, first_store, workspace, made)
        gate = asyncio.Event()

        async def slow(_: object) -> Reply:
            await gate.wait()
            return text("the first answer")

        srv.set_responder(slow)
        turn = asyncio.ensure_future(first.run_conversation("first prompt"))
        for _ in range(1000):
            if srv.requests:
                break
            await asyncio.sleep(0.01)
        second = resume(srv, second_store, workspace, made)
        await second.__aenter__()
        assert [m["role"] for m in second.messages] == ["user"]
        assert [m["role"] for m in await stored(db)] == ["user"]
        gate.set()
        assert (await turn).final_response == "the first answer"
        assert [m["content"] for m in await stored(db)] == ["first prompt", "the first answer"]
        srv.set_responder(None)
        srv.push(text("the second answer"))
        result = await second.run_conversation("second prompt")
        assert result.completed
        assert [m["content"] for m in await stored(db)] == ["first prompt", "the first answer", "second prompt",
                                                             "the second answer"]
