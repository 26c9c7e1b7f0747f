"""Suite 2: kill -9 ``agentls lsp`` at random moments during multi-tool turns, restart, load, go on.

A "completed round" is one whose tool results the editor saw completed (``tool_call_update`` with a
final status) through ``agent/update`` before the kill; they are recorded on the client side at the
instant of the kill. After each restart ``agent/loadSession`` must hold every completed round, the
transcript must satisfy docs/loop.md §3, and the next turn must work.

Seeded: the seed is printed; replay with ``AGENTLS_CRASH_SEED=<seed>``. 15 kills in CI, 100 with
``AGENTLS_LONG=1``.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import time
from pathlib import Path
from typing import Any

from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, text, tools
from agentls.agent.transcript import MISSING_RESULT, violations

from .conftest import LONG
from .wire import LspProc, marked_pids, server_env

ROUNDS = 4  # tool rounds per turn, then a text answer
UPDATES_PER_TURN = 50  # about what one turn sends (tool_call, in_progress, completed, usage, text chunks)
_TASK = re.compile(r"^task (\d+)$")


def _round_ids(task: int, rnd: int) -> list[str]:
    return [f"t{task}r{rnd}c{j}" for j in range(3)]


def responder(req: RecordedRequest) -> Reply:
    """``task N``: ROUNDS rounds of read_file + list_dir + write_file, then a text answer."""
    messages = req.messages
    start = max(i for i, m in enumerate(messages) if m.get("role") == "user" and isinstance(m.get("content"), str)
                and _TASK.match(m["content"]))
    task = int(_TASK.match(messages[start]["content"]).group(1))  # type: ignore[union-attr]
    rnd = sum(1 for m in messages[start:] if m.get("role") == "assistant")
    if rnd >= ROUNDS:
        return text(f"done with task {task}: all {ROUNDS} rounds ran", chunk_delay=0.002)
    a, b, c = _round_ids(task, rnd)
    return tools(call("read_file", {"path": "notes.md", "limit": 100 + rnd}, id=a), call("list_dir", {}, id=b),
                 call("write_file", {"path": f"out/t{task}r{rnd}.txt", "content": f"task {task} round {rnd}\n"},
                      id=c), latency=0.005)


class Watch:
    """The editor's view: which tool calls it saw finish. ``reached`` is set at the kill moment: once
    ``target`` updates arrived, or (``round_target``) as soon as that round is seen complete, the most
    adversarial moment for persistence."""

    def __init__(self, target: int, round_target: int | None = None) -> None:
        self.seen: dict[str, str] = {}
        self.count = 0
        self.target = target
        self.round_target = round_target
        self.reached = asyncio.Event()
        if target == 0 and round_target is None:
            self.reached.set()

    def __call__(self, params: dict[str, Any]) -> None:
        update = params["update"]
        self.count += 1
        if update.get("sessionUpdate") == "tool_call_update" and update.get("status") in ("completed", "failed"):
            call_id = update["toolCallId"]
            self.seen[call_id] = update["status"]
            key = call_id.rsplit("c", 1)[0]
            if self.round_target is not None and key.endswith(f"r{self.round_target}") \
                    and key in _completed_rounds(self.seen):
                self.reached.set()
        if self.round_target is None and self.count >= self.target:
            self.reached.set()

    def describe(self) -> str:
        if self.round_target is None:
            return f"after update {self.count} (target {self.target})"
        return f"as round {self.round_target} was seen complete (update {self.count})"


def _completed_rounds(seen: dict[str, str]) -> dict[str, list[str]]:
    """Rounds (``t3r1``) all of whose calls the editor saw finish."""
    rounds: dict[str, list[str]] = {}
    for call_id in seen:
        rounds.setdefault(call_id.rsplit("c", 1)[0], []).append(call_id)
    return {key: sorted(ids) for key, ids in rounds.items() if len(ids) == 3}


def _missing(messages: list[dict[str, Any]], rounds: dict[str, list[str]]) -> list[str]:
    calls = {c["id"] for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []}
    results = {m["tool_call_id"] for m in messages if m.get("role") == "tool" and m.get("content") != MISSING_RESULT}
    return [key for key, ids in rounds.items() if not set(ids) <= calls or not set(ids) <= results]


async def test_kill9_at_random_moments_loses_no_completed_round(srv: ScriptedServer, workspace: Path,
                                                                home: Path) -> None:
    seed = int(os.environ.get("AGENTLS_CRASH_SEED") or random.SystemRandom().randrange(2 ** 32))
    kills = 100 if LONG else 15
    print(f"\ncrash: seed={seed} (replay with AGENTLS_CRASH_SEED={seed})")
    rng = random.Random(seed)
    srv.set_responder(responder)
    env = server_env(home)
    # A window large enough that 100 turns never trigger compression (which archives old rounds on purpose).
    options = {"model": "scripted", "baseUrl": srv.openai_url, "approval": "yolo", "titles": "prompt",
               "maxRetries": 0, "contextWindow": 10_000_000}
    session_id: str | None = None
    must_have: dict[str, list[str]] = {}  # every round the editor saw complete, over all kills
    lost: dict[str, int] = {}  # round -> the restart that found it missing
    kills_log: list[str] = []
    finished_before_kill = 0
    empty_restarts = 0  # restarts that found the session not yet stored (killed before its first prompt was)
    started = time.monotonic()
    for n in range(kills + 1):
        lsp = await LspProc.start(env, workspace)
        try:
            await lsp.initialize(workspace, options)
            if session_id is None:
                session_id = await lsp.new_session()
            else:
                reply = await lsp.call("agent/loadSession", {"sessionId": session_id}, 30)
                if "error" in reply:
                    # An empty session is not stored (docs/acp.md): killed before its first prompt was, the
                    # session is gone, which is right only while the editor had seen no round complete.
                    assert "unknown session" in reply["error"]["message"] and not must_have, f"after kill {n}: {reply}"
                    empty_restarts += 1
                    session_id = await lsp.new_session()
                messages = reply.get("result", {}).get("messages", [])
                assert violations(messages) == [], f"after kill {n}: {violations(messages)}"
                for key in _missing(messages, must_have):
                    lost.setdefault(key, n)
            watch = Watch(rng.randint(0, UPDATES_PER_TURN), rng.randrange(ROUNDS) if rng.random() < 1 / 3 else None)
            lsp.on_update = watch
            turn = lsp.start_request("agent/turn", {"sessionId": session_id, "prompt": f"task {n}"})
            if n == kills:  # the last turn runs to the end: the session still works after all the kills
                answer = await asyncio.wait_for(lsp.answer(turn), 60)
                result = answer["result"]
                assert result["completed"] and result["finalResponse"].startswith(f"done with task {n}")
                must_have.update(_completed_rounds(watch.seen))
                loaded = await lsp.result("agent/loadSession", {"sessionId": session_id})
                assert violations(loaded["messages"]) == []
                for key in _missing(loaded["messages"], must_have):
                    lost.setdefault(key, n)
                assert await lsp.shutdown() == 0
                break
            waiter = asyncio.ensure_future(watch.reached.wait())
            done, _ = await asyncio.wait([waiter, lsp.answer(turn)], timeout=60, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            assert done, f"kill {n}: the turn made no progress in 60 s"
            delay = rng.uniform(0, 0.03) if rng.random() < 0.5 else 0.0
            if delay:
                await asyncio.sleep(delay)
            lsp.kill9()
            rounds = _completed_rounds(watch.seen)  # what the editor had seen at the instant of the kill
            must_have.update(rounds)
            finished_before_kill += lsp.answer(turn).done()
            kills_log.append(f"kill {n} {watch.describe()} + {delay * 1000:.1f} ms, "
                             f"the editor had seen {sorted(rounds)} complete")
        finally:
            await lsp.aclose()
        assert not marked_pids(lsp.mark), "a process of the killed server is still running"
    elapsed = time.monotonic() - started
    print(f"crash: seed={seed}, {kills} kills ({finished_before_kill} after the turn had ended), "
          f"{len(must_have)} completed rounds seen by the editor, {empty_restarts} restarts before the session was "
          f"stored, {len(lost)} lost rounds "
          f"{sorted(lost)}, next turn worked, {elapsed:.1f}s")
    assert not lost, "rounds the editor saw completed are missing after the restart: " + ", ".join(
        f"{key} (missing at restart {n}; {kills_log[n - 1] if 0 < n <= len(kills_log) else ''})"
        for key, n in sorted(lost.items()))


async def test_kill9_before_any_answer_then_load_shows_the_prompt_and_the_next_turn_follows_it(
        srv: ScriptedServer, workspace: Path, home: Path) -> None:
    """Killed while the model was thinking about the first prompt: ``agent/loadSession`` in a new server shows
    that prompt (replayed as the user's message), then a placeholder answer it does not replay; the next
    turn's request alternates user, assistant, user."""
    from .hostile import lsp_server

    env = server_env(home)
    srv.push(text("never sent", latency=120))
    async with lsp_server(srv, workspace, home, env=env) as first:
        sid = await first.new_session()
        first.start_request("agent/turn", {"sessionId": sid, "prompt": "the first prompt"})
        for _ in range(3000):
            if srv.requests:
                break
            await asyncio.sleep(0.01)
        first.kill9()
        await first.proc.wait()
    srv.clear()
    srv.push(text("the answer"))
    async with lsp_server(srv, workspace, home, env=env) as second:
        loaded = await second.result("agent/loadSession", {"sessionId": sid})
        assert [(m["role"], m["content"]) for m in loaded["messages"]] == [
            ("user", "the first prompt"), ("assistant", "(no answer: the previous run stopped before answering)")]
        shown = [u["update"] for u in second.updates]
        assert [u["sessionUpdate"] for u in shown] == ["user_message_chunk"], shown
        result = await second.result("agent/turn", {"sessionId": sid, "prompt": "the second prompt"}, 60)
        assert result["completed"] and result["finalResponse"] == "the answer"
        sent = [m["role"] for m in srv.requests[-1].messages if m["role"] != "system"]
        assert sent == ["user", "assistant", "user"], srv.requests[-1].messages
        after = (await second.result("agent/loadSession", {"sessionId": sid}))["messages"]
        assert [m["role"] for m in after] == ["user", "assistant", "user", "assistant"]
        assert violations(after) == []
        assert await second.shutdown() == 0
