"""docs/loop.md §7: a compression in the middle of a turn keeps the turn's user message (and the runtime
context riding on it) where it is: exactly once, on that message, nothing duplicated or lost."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, error, text, tools

from .conftest import AgentFactory
from .helpers import check, purpose

CTX = "EDITOR-STATE: big0.txt is open at line 3"
REQUEST = "REQUEST-7: read big0.txt, big1.txt and big2.txt and sum them up"
STEER = "STEER-9: also mention the line count"


def _words(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def _history(exchanges: int = 4) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(exchanges):
        out += [{"role": "user", "content": f"old question {i}: " + _words(f"q{i}x", 300)},
                {"role": "assistant", "content": f"old answer {i}: " + _words(f"a{i}y", 300)}]
    return out


def _rows(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return [(r, c or "") for r, c in conn.execute(
            "SELECT role, content FROM messages WHERE archived = 0 ORDER BY session_id, seq")]


def _wire(req: RecordedRequest) -> list[tuple[str, str]]:
    """(role, text) of an OpenAI-wire request's messages, the system prompt left out."""
    out = []
    for m in req.messages:
        if m.get("role") in ("system", "developer"):
            continue
        content = m.get("content")
        body = content if isinstance(content, str) else "".join(
            str(b.get("text", "")) for b in content or () if isinstance(b, dict))
        out.append((str(m["role"]), body))
    return out


class Recorder:
    """Answers the script, and keeps the stored transcript as it was at each turn request."""

    def __init__(self, db: Path, script: list[Reply]) -> None:
        self.db, self.script = db, script
        self.seen: list[tuple[RecordedRequest, list[tuple[str, str]]]] = []

    def __call__(self, req: RecordedRequest) -> Reply:
        if purpose(req) == "summary":
            return text("SUMMARY of the earlier work")
        if purpose(req) != "turn":
            return text("title")
        reply = self.script.pop(0)
        if reply.status == 200:  # an overflow error is retried after compression: it sees the same rows
            self.seen.append((req, _rows(self.db)))
        return reply


def _short(messages: list[tuple[str, str]]) -> list[str]:
    return [f"{role}: {body[:30]}" for role, body in messages]


def _assert_sent_as_stored(seen: list[tuple[RecordedRequest, list[tuple[str, str]]]]) -> int:
    """Checks every request; returns how many carried the request merged after a summary (pinned mid-turn)."""
    merged = 0
    for req, stored in seen:
        assert req.rejected is None, req.rejected
        sent = _wire(req)
        carrying = [i for i, (_, body) in enumerate(sent) if CTX in body]
        assert len(carrying) == 1, f"runtime context on {len(carrying)} messages: {_short(sent)}"
        at = carrying[0]
        role, body = sent[at]
        assert role == "user" and body.endswith("\n\n" + CTX) and REQUEST in body, sent[at]
        assert sum(REQUEST in b for _, b in sent) == 1, "the turn's request is duplicated or lost"
        sent[at] = (role, body.removesuffix("\n\n" + CTX))
        assert sent == stored, f"sent {_short(sent)}, stored {_short(stored)}"
        merged += body.startswith("[Summary of ")
    return merged


def _big_files(workspace: Path) -> None:
    for i in range(3):
        (workspace / f"big{i}.txt").write_text("\n".join(_words(f"f{i}l{j}w", 25) for j in range(12)))


async def test_threshold_compression_mid_turn_keeps_the_turn_request_in_place(
        srv: ScriptedServer, make_agent: AgentFactory, workspace: Path, tmp_path: Path) -> None:
    _big_files(workspace)
    db = tmp_path / "s.db"
    script = [tools(call("read_file", {"path": f"big{i}.txt"})) for i in range(3)] + [text("all read")]
    rec = Recorder(db, script)
    srv.set_responder(rec)
    agent = make_agent("openai", session_db=db, context_window=4096)
    result = check(await agent.run_conversation(REQUEST, conversation_history=_history(), runtime_context=CTX))
    assert result.final_response == "all read" and not script
    summaries = [r for r in srv.requests if purpose(r) == "summary"]
    assert len(summaries) >= 2, "the test must compress before the first call and again mid-turn"
    assert _assert_sent_as_stored(rec.seen) >= 1, "the request must be pinned after a summary mid-turn"
    stored = _rows(db)
    assert all(CTX not in body for _, body in stored)
    assert sum(REQUEST in body for _, body in stored) == 1
    assert [r for r, _ in stored][-2:] == ["tool", "assistant"]


async def test_overflow_compression_mid_turn_keeps_the_turn_request_in_place(
        srv: ScriptedServer, make_agent: AgentFactory, workspace: Path, tmp_path: Path) -> None:
    _big_files(workspace)
    db = tmp_path / "s.db"
    overflow = error(400, "This model's maximum context length is 4096 tokens.", error_code="context_length_exceeded")
    script = [tools(call("read_file", {"path": "big0.txt"})), tools(call("read_file", {"path": "big1.txt"})),
              overflow, tools(call("read_file", {"path": "big2.txt"})), overflow, text("all read")]
    rec = Recorder(db, script)
    srv.set_responder(rec)
    agent = make_agent("openai", session_db=db, context_window=6000, compression_threshold=0.95)  # only the overflow passes
    result = check(await agent.run_conversation(REQUEST, conversation_history=_history(3), runtime_context=CTX))
    assert result.final_response == "all read" and not script
    assert len([r for r in srv.requests if purpose(r) == "summary"]) == 2
    assert _assert_sent_as_stored(rec.seen) >= 1, "the request must be pinned after a summary mid-turn"
    assert sum(REQUEST in body for _, body in _rows(db)) == 1


async def test_a_steer_never_gets_the_turn_request_summarised_away(
        srv: ScriptedServer, make_agent: AgentFactory, workspace: Path, tmp_path: Path) -> None:
    """A steer is the last user message: before, it was the one kept and the turn's own request was summarised
    (the runtime context then rode on whatever took its index). The turn's request is the one pinned."""
    _big_files(workspace)
    db = tmp_path / "s.db"
    agent = make_agent("openai", session_db=db, context_window=4096)
    script = [tools(call("read_file", {"path": f"big{i}.txt"})) for i in range(3)] + [text("all read")]
    rec = Recorder(db, script)

    def responder(req: RecordedRequest) -> Reply:
        if purpose(req) == "turn" and len(script) == 4:
            assert agent.steer(STEER)  # delivered after the first tool round
        return rec(req)

    srv.set_responder(responder)
    result = check(await agent.run_conversation(REQUEST, conversation_history=_history(), runtime_context=CTX))
    assert result.final_response == "all read" and not script
    assert _assert_sent_as_stored(rec.seen) >= 1
    stored = _rows(db)
    assert sum(REQUEST in body for _, body in stored) == 1 and all(CTX not in body for _, body in stored)
