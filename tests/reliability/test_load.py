"""Suite 8: 50 concurrent sessions on one ``agentls lsp``, with steers and interrupts thrown in at random.

Every turn must end (its request answered, and a last turn per session still runs), no update may be
lost (everything in each stored transcript was shown to the editor, every tool call announced got its
final status, every accepted steer reached the transcript or came back as ``pendingSteer``), and after
``shutdown``/``exit`` no process, task or warning may be left over. Seeded; the seed is printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.host import CommandSpec
from agentls.agent.process import run_process
from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, text, tools
from agentls.agent.transcript import violations

from .conftest import LONG
from .wire import AcpProc, LspProc, marked_pids, server_env

SESSIONS = 50
ROUNDS = 2
LEFTOVERS = ("Task was destroyed", "was never awaited", "did not end within", "Traceback", "Unclosed")


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def responder(rng: random.Random) -> Any:
    def reply(req: RecordedRequest) -> Reply:
        messages = req.messages
        last = max(i for i, m in enumerate(messages) if m.get("role") == "user" and isinstance(m.get("content"), str))
        rnd = sum(1 for m in messages[last:] if m.get("role") == "assistant")
        latency = rng.uniform(0, 0.05)
        if messages[last]["content"].startswith("slow") and rnd == 0:
            return tools(call("terminal", {"command": "sleep 29.87"}), latency=latency)
        if rnd >= ROUNDS:
            return text(f"answer to {messages[last]['content']}", latency=latency)
        return tools(call("read_file", {"path": "notes.md"}), call("list_dir", {}),
                     call("terminal", {"command": f"sleep 0.0{rng.randint(1, 9)}"}), latency=latency)
    return reply


async def session_life(lsp: LspProc, n: int, rng: random.Random) -> dict[str, Any]:
    sid = await lsp.new_session()
    life: dict[str, Any] = {"sid": sid, "steers": [], "outcomes": [], "pending": [], "results": []}
    turn = lsp.start_request("agent/turn", {"sessionId": sid, "prompt": f"job {n}"})
    for action in ("steer", "interrupt", "steer"):
        if rng.random() < 0.5:
            await asyncio.sleep(rng.uniform(0, 0.4))
            if action == "steer":
                steer = f"steer {n}.{len(life['steers'])}"
                outcome = await lsp.result("agent/steer", {"sessionId": sid, "text": steer}, 60)
                assert outcome["outcome"] in ("queued", "startedNewTurn"), outcome
                life["steers"].append(steer)
                life["outcomes"].append(outcome["outcome"])
            else:
                await lsp.result("agent/interrupt", {"sessionId": sid}, 60)
    answer = await asyncio.wait_for(lsp.answer(turn), 120)
    assert "result" in answer, answer
    life["results"].append(answer["result"])
    final = await lsp.result("agent/turn", {"sessionId": sid, "prompt": f"last {n}"}, 120)
    assert final["completed"] and final["finalResponse"] == f"answer to last {n}", final
    life["results"].append(final)
    life["pending"] = [r["pendingSteer"] for r in life["results"] if r.get("pendingSteer")]
    life["messages"] = (await lsp.result("agent/loadSession", {"sessionId": sid}, 60))["messages"]
    return life


def lost_updates(lsp: LspProc, life: dict[str, Any]) -> list[str]:
    sid, messages = life["sid"], life["messages"]
    problems = [f"{sid[:6]}: {v}" for v in violations(messages)]
    updates = [u["update"] for u in lsp.updates if u["sessionId"] == sid and u["update"]["sessionUpdate"] !=
               "user_message_chunk"]  # loadSession replays history; judge the live stream only
    announced = {u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call"}
    finished = {u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call_update"
                and u.get("status") in ("completed", "failed")}
    problems += [f"{sid[:6]}: tool call {c} never got a final status" for c in sorted(announced - finished)]
    for m in messages:
        if m["role"] == "tool" and m["tool_call_id"] not in finished:
            problems.append(f"{sid[:6]}: stored result of {m['tool_call_id']} was never shown as finished")
    users = {m["content"] for m in messages if m["role"] == "user" and isinstance(m["content"], str)}
    for steer in life["steers"]:
        if not any(steer in u for u in users) and not any(steer in p for p in life["pending"]):  # joined: a\n\nb
            turns = [(r["exitReason"], r.get("pendingSteer")) for r in life["results"]]
            problems.append(f"{sid[:6]}: steer {steer!r} vanished (steer outcomes {life['outcomes']}, turns "
                            f"{turns}, user messages {sorted(users)})")
    return problems


async def test_fifty_concurrent_sessions_with_steers_and_interrupts(srv: ScriptedServer, workspace: Path,
                                                                    home: Path) -> None:
    seed = int(os.environ.get("AGENTLS_LOAD_SEED") or random.SystemRandom().randrange(2 ** 32))
    sessions = SESSIONS * (4 if LONG else 1)
    print(f"\nload: seed={seed} (replay with AGENTLS_LOAD_SEED={seed})")
    rng = random.Random(seed)
    srv.set_responder(responder(random.Random(seed + 1)))
    lsp = await LspProc.start(server_env(home), workspace, stderr=home / "stderr.log")
    started = time.monotonic()
    try:
        await lsp.initialize(workspace, {"model": "scripted", "baseUrl": srv.openai_url, "approval": "yolo",
                                         "titles": "prompt", "maxRetries": 0, "contextWindow": 1_000_000})
        await lsp.result("agent/listSessions", {})  # the store is open before the burst
        lives = await asyncio.gather(*[session_life(lsp, n, random.Random(rng.random())) for n in range(sessions)])
        problems = [p for life in lives for p in lost_updates(lsp, life)]
        # Then shut down under load: every session is inside a 30 s command when ``shutdown`` arrives.
        slow = [lsp.start_request("agent/turn", {"sessionId": life["sid"], "prompt": "slow"}) for life in lives]
        deadline = time.monotonic() + 60
        while sum("sleep\x0029.87" in cmdline(pid) for pid in marked_pids(lsp.mark)) < sessions // 2:
            assert time.monotonic() < deadline, "the slow commands did not start"
            await asyncio.sleep(0.05)
        t0 = time.monotonic()
        assert await lsp.shutdown(60) == 0
        shutdown_s = time.monotonic() - t0
        await asyncio.sleep(1.0)  # anything still here a second after the exit was left behind
        left = [f"{pid}: {cmdline(pid).replace(chr(0), ' ')[:80]}" for pid in marked_pids(lsp.mark)]
        unanswered = [i for i in slow if not lsp.answer(i).done()]
    finally:
        await lsp.aclose()
    log = (home / "stderr.log").read_text(errors="replace")
    leftovers = [line for line in log.splitlines() if any(s in line for s in LEFTOVERS)]
    turns = sum(len(life["results"]) for life in lives)
    steers = sum(len(life["steers"]) for life in lives)
    interrupted = sum(r["interrupted"] for life in lives for r in life["results"])
    print(f"load: seed={seed}, {sessions} sessions, {turns} answered turns ({interrupted} interrupted), "
          f"{steers} steers, {len(srv.requests)} model calls, {len(lsp.updates)} updates, {len(problems)} lost "
          f"updates, shutdown with {sessions} turns running took {shutdown_s:.1f}s, {len(left)} processes and {len(leftovers)} leftover warnings "
          f"after it, {time.monotonic() - started:.1f}s")
    assert problems == [], problems[:20]
    assert unanswered == [], f"{len(unanswered)} turns running at shutdown were never answered"
    assert left == [], "processes outlived the server"
    assert leftovers == [], leftovers[:10]


@pytest.mark.parametrize("face", ["lsp", "acp"])
async def test_the_first_requests_can_arrive_together(face: str, srv: ScriptedServer, workspace: Path,
                                                      home: Path) -> None:
    """An editor that restores several sessions at start-up sends its first requests at once; the
    session store must be open for all of them, not only for the first."""
    env = server_env(home, AGENTLS_MODEL="scripted", AGENTLS_BASE_URL=srv.openai_url)
    if face == "lsp":
        lsp = await LspProc.start(env, workspace, stderr=home / "stderr.log")
        proc: LspProc | AcpProc = lsp
        await lsp.initialize(workspace, {"model": "scripted", "baseUrl": srv.openai_url})
        calls = [lsp.call("agent/listSessions", {}) for _ in range(5)] + [lsp.call("agent/newSession", {})]
    else:
        acp = await AcpProc.start(env, workspace, stderr=home / "stderr.log")
        proc = acp
        await acp.initialize()
        calls = [acp.call("session/list", {}) for _ in range(5)] + \
            [acp.call("session/new", {"cwd": str(workspace), "mcpServers": []})]
    try:
        answers = await asyncio.gather(*calls)
        errors = [a["error"]["message"][:120] for a in answers if "error" in a]
        assert errors == [], errors
    finally:
        await proc.aclose()


async def test_a_command_cancelled_while_it_starts_is_killed(tmp_path: Path) -> None:
    """The load test's leftover processes, pinned: a turn cancelled (shutdown, interrupt, disconnect)
    while ``run_process`` is still starting ``sh -c`` leaves the command running (``sh`` is killed, the
    command it forked is not), and the cancelled turn then waits until that orphan exits."""
    marker = "sleep 41.2345"

    def orphans() -> list[int]:
        return [int(p) for p in os.listdir("/proc") if p.isdigit() and marker in cmdline(int(p)).replace("\0", " ")]

    leaked: list[int] = []
    hung: list[int] = []
    try:
        for ticks in range(12):
            spec = CommandSpec(command=marker, cwd=tmp_path, timeout=60, output_limit=1000, tool_call_id="t")
            task = asyncio.ensure_future(run_process(spec))
            for _ in range(ticks):
                await asyncio.sleep(0)
            task.cancel()
            done, _ = await asyncio.wait([task], timeout=3)
            if not done:
                hung.append(ticks)
            await asyncio.sleep(0.2)
            if orphans():
                leaked.append(ticks)
            for pid in orphans():
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(asyncio.CancelledError):
                await task
    finally:
        for pid in orphans():
            os.kill(pid, signal.SIGKILL)
    assert (leaked, hung) == ([], []), (f"cancelled after {leaked} event-loop ticks, the command kept running; "
                                        f"after {hung} ticks the cancelled call did not return until it was killed")
