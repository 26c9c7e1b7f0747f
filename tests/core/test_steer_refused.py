"""docs/loop.md §2.6: a steer belongs to the turn it was sent to. A turn refused because another process holds
the session's lease hands the steers it accepted back on ``SessionBusy.pending_steer``; a turn that ends by
raising anything else drops them. Either way they never reach a later turn."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from agentls.agent.agent import AIAgent
from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.sessions import SessionBusy

from .conftest import AgentFactory
from .helpers import check, user_texts

STEER = "Also update the changelog."
HOLDER = """
import asyncio, sys
sys.path.insert(0, sys.argv[3])
from agentls.agent.sessions import SessionStore

async def main():
    async with SessionStore(sys.argv[1]) as store:
        await store.acquire_lease(sys.argv[2])
        print("held", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        await store.release_lease(sys.argv[2])

asyncio.run(main())
"""
ROOT = Path(__file__).resolve().parents[2]


async def steer_once_running(agent: AIAgent, text: str) -> bool:
    """``steer`` as soon as the agent's turn counts as running (it asks for the lease right then)."""
    for _ in range(100_000):
        if agent.running:
            return agent.steer(text)
        await asyncio.sleep(0)
    raise AssertionError("the turn never started")


def leaked(srv: ScriptedServer, since: int) -> list[str]:
    return [t for req in srv.requests[since:] for t in user_texts(req) if STEER in t]


async def test_a_steer_sent_to_a_turn_refused_as_busy_comes_back_on_the_refusal(
        make_agent: AgentFactory, srv: ScriptedServer, tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    agent = make_agent(session_db=db)
    srv.push(text("first answer"))
    check(await agent.run_conversation("first"))
    holder = await asyncio.create_subprocess_exec(sys.executable, "-c", HOLDER, str(db), agent.session_id, str(ROOT),
                                                  stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert (await asyncio.wait_for(holder.stdout.readline(), 30)).strip() == b"held"
        turn = asyncio.ensure_future(agent.run_conversation("second"))
        assert await steer_once_running(agent, STEER)  # accepted: the turn was asking for the lease
        with pytest.raises(SessionBusy) as refused:
            await turn
        assert not agent.running
        holder.stdin.write(b"done\n")
        assert await asyncio.wait_for(holder.wait(), 30) == 0
    finally:
        if holder.returncode is None:
            holder.kill()
            await holder.wait()
    before = len(srv.requests)
    srv.push(tools(call("list_dir", {})), text("third answer"))
    result = check(await agent.run_conversation("third"))
    assert result.final_response == "third answer" and result.pending_steer is None
    assert leaked(srv, before) == [] and all(STEER not in str(m.get("content")) for m in result.messages)
    assert getattr(refused.value, "pending_steer", None) == STEER  # handed back to the caller instead


async def test_a_steer_sent_to_a_cancelled_turn_is_dropped(make_agent: AgentFactory, srv: ScriptedServer,
                                                           tmp_path: Path) -> None:
    agent = make_agent(session_db=tmp_path / "sessions.db")
    srv.push(text("never", latency=30))
    turn = asyncio.ensure_future(agent.run_conversation("first"))
    while not srv.requests:
        await asyncio.sleep(0.005)
    assert agent.steer(STEER)  # the model is thinking: it would be delivered after the next tool round
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    before = len(srv.requests)
    srv.push(tools(call("list_dir", {})), text("second answer"))
    result = check(await agent.run_conversation("second"))
    assert result.pending_steer is None and leaked(srv, before) == []
