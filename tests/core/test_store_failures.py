"""docs/loop.md §4.4: a session store that fails during a turn does not end the turn.

The transcript is saved before every model call. When that save fails it is tried once more; then the turn
goes on with the transcript in memory, the failure is listed in ``cleanup_errors``, and the next save that
works writes everything, once. The store's failures here are real SQLite failures on a real file: another
process holding the database's write lock past the busy timeout, and a trigger that aborts the writes as a
full disk or an I/O error would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, text, tools
from agentls.agent.sessions import SessionStore
from agentls.agent.transcript import violations
from agentls.agent.types import Message

from .conftest import AgentFactory
from .helpers import check, roles

FAIL = "RAISE(ABORT, 'disk I/O error (injected)')"
LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


@contextlib.contextmanager
def failing(db: Path, table: str = "messages", event: str = "INSERT") -> Iterator[None]:
    """Every ``event`` on ``table`` fails while the block runs (set and removed by another connection)."""
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as raw:
        raw.execute(f"CREATE TRIGGER fail_{table} BEFORE {event} ON {table} BEGIN SELECT {FAIL}; END")
        try:
            yield
        finally:
            raw.execute(f"DROP TRIGGER fail_{table}")


async def stored(db: Path, session_id: str) -> list[Message]:
    async with SessionStore(db) as store:
        return await store.load_messages(session_id)


def row_counts(db: Path, session_id: str) -> tuple[int, int]:
    """(active rows, all rows) of the session, read with the sqlite3 module."""
    with contextlib.closing(sqlite3.connect(db)) as raw:
        total, archived = raw.execute("SELECT count(*), coalesce(sum(archived), 0) FROM messages "
                                      "WHERE session_id = ?", (session_id,)).fetchone()
    return int(total) - int(archived), int(total)


class _OnRetry(logging.Handler):
    """Calls ``then`` when the loop says a save failed and is tried once more."""

    def __init__(self, then: Callable[[], None]) -> None:
        super().__init__()
        self.then = then

    def emit(self, record: logging.LogRecord) -> None:
        if "trying once more" in record.getMessage():
            self.then()


async def test_a_save_refused_by_a_lock_another_process_holds_is_tried_once_more(
        make_agent: AgentFactory, srv: ScriptedServer, tmp_path: Path) -> None:
    """Another process holds the database's write lock from the moment the turn is under way: the save before
    the model call fails (after the 5 s busy timeout). The lock goes away then, the second try saves the
    prompt, and only then is the model asked. Nothing is reported: the turn saved everything."""
    db = tmp_path / "sessions.db"
    locker: list[asyncio.subprocess.Process] = []
    armed = False

    async def lock_when_running(update: dict[str, Any]) -> None:
        turn = ((update.get("_meta") or {}).get("agentls") or {}).get("turn") or {}
        if armed and turn.get("state") == "running" and not locker:
            proc = await asyncio.create_subprocess_exec(sys.executable, "-c", LOCKER, str(db),
                                                        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
            locker.append(proc)
            assert proc.stdout is not None
            assert (await proc.stdout.readline()).strip() == b"locked"

    def unlock() -> None:
        assert locker and locker[0].stdin is not None
        locker[0].stdin.write(b"go\n")

    seen_by_the_model: list[list[str]] = []

    def answer(req: RecordedRequest) -> Reply:
        with contextlib.closing(sqlite3.connect(db)) as raw:  # what the store held when the model was asked
            seen_by_the_model.append([r[0] for r in raw.execute("SELECT content FROM messages WHERE archived = 0 ORDER BY seq")])
        return text("answered")

    agent = make_agent(session_db=db, on_update=lock_when_running)
    srv.push(text("first answer"))
    check(await agent.run_conversation("first"))
    armed = True
    srv.set_responder(answer)
    handler = _OnRetry(unlock)
    logging.getLogger("agentls.loop").addHandler(handler)
    try:
        result = check(await agent.run_conversation("second"))
    finally:
        logging.getLogger("agentls.loop").removeHandler(handler)
        for proc in locker:  # told to go, it rolls back and exits on its own; a loaded machine may take a while
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 60)
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
    assert locker and locker[0].returncode == 0  # it held the lock, then let go when asked
    assert result.completed and result.cleanup_errors == ()
    assert seen_by_the_model == [["first", "first answer", "second"]]
    saved = await stored(db, agent.session_id)
    assert saved == result.messages[1:] and violations(saved) == []
    assert row_counts(db, agent.session_id) == (4, 4)


async def test_a_store_that_keeps_failing_does_not_end_the_turn(
        make_agent: AgentFactory, srv: ScriptedServer, tmp_path: Path, wire: str) -> None:
    """Every write of the turn fails (the prompt before the first call, the tool results, the save before the
    second call, the final save): the turn still runs to its answer, with a valid transcript in memory and the
    failure reported once. The next turn, on a store that works again, writes everything, once."""
    db = tmp_path / "sessions.db"
    agent = make_agent(wire, session_db=db)
    srv.push(text("first answer"), tools(call("read_file", {"path": "notes.txt"})), text("read it"),
             text("third answer"))
    check(await agent.run_conversation("first"))
    with failing(db):
        result = check(await agent.run_conversation("second"))
        assert [m["content"] for m in await stored(db, agent.session_id)] == ["first", "first answer"]
    assert result.completed and result.final_response == "read it"
    assert roles(result.messages) == ["system", "user", "assistant", "user", "assistant", "tool", "assistant"]
    assert len(result.cleanup_errors) == 1, result.cleanup_errors
    assert result.cleanup_errors[0].startswith("persist: StoreError: ") and "injected" in result.cleanup_errors[0]
    assert "line 1" in str(srv.requests[2].messages)  # the model got the tool result all the same
    third = check(await agent.run_conversation("third"))
    saved = await stored(db, agent.session_id)
    assert saved == third.messages[1:] and violations(saved) == []
    assert [m["role"] for m in saved] == ["user", "assistant", "user", "assistant", "tool", "assistant", "user",
                                          "assistant"]
    assert row_counts(db, agent.session_id) == (8, 8)  # appended when the store worked again: nothing twice


async def test_a_lease_that_cannot_be_released_does_not_lose_the_answer(
        make_agent: AgentFactory, srv: ScriptedServer, tmp_path: Path) -> None:
    """The store fails as the turn gives its lease back, after the answer was saved: the answer is returned
    (the lease lapses on its own), and the next turn works."""
    db = tmp_path / "sessions.db"
    agent = make_agent(session_db=db)
    srv.push(text("first answer"), text("second answer"), text("third answer"))
    check(await agent.run_conversation("first"))
    with failing(db, "leases", "DELETE"):
        result = check(await agent.run_conversation("second"))
    assert result.final_response == "second answer"
    assert check(await agent.run_conversation("third")).final_response == "third answer"
    saved = await stored(db, agent.session_id)
    assert [m["content"] for m in saved] == ["first", "first answer", "second", "second answer", "third",
                                             "third answer"]
