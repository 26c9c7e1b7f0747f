"""A streamed model call cut part-way and made again, seen by the official ACP SDK client (docs/acp.md
"Updates"): the exact ``session/update`` sequence on the OpenAI chat and Anthropic wires, for a retry that
repeats the answer, one that differs, and a fallback model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from acp import text_block
from acp_harness.agent import Agent, agent_env, start_agent, write_config

from agentls.agent.scripted import ScriptedServer, cut_stream, text
from tests.stream_chunks import shown_chunks

pytestmark = pytest.mark.asyncio(loop_scope="module")

ANSWER = text("Hello brave new world", reasoning="think about it")
CUT_IN_TEXT = {"openai": 5, "anthropic": 10}  # SSE frames up to and including the text delta "Hello "


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["openai", "anthropic"])
async def wired(request: pytest.FixtureRequest, scripted: ScriptedServer,
                tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[str, Agent]]:
    wire: str = request.param
    home = tmp_path_factory.mktemp(f"agent-{wire}")
    env = agent_env(scripted, home, AGENTLS_RETRY_BASE_DELAY="0.01", AGENTLS_RETRY_MAX_DELAY="0.05")
    if wire == "anthropic":
        env.update(AGENTLS_PROVIDER="anthropic", AGENTLS_BASE_URL=scripted.anthropic_url)
    async with start_agent(home, env) as agent:
        yield wire, agent
    agent.check_frames()  # every frame valid ACP schema v1, the messageId and _meta included


async def _turn(agent: Agent, scripted: ScriptedServer, ws: Path) -> tuple[list[tuple[str, str, int, Any]], str]:
    """Run one prompt; the chunks as ``(kind, text, message number, replaced message number)``, and the
    stored answer."""
    scripted.requests.clear()
    agent.client.reset()
    sid = await agent.new_session(ws)
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block("hi")])
    assert response.stop_reason == "end_turn"
    out = shown_chunks(agent.client.updates[sid])
    loaded = await _stored_answer(agent, sid, ws)
    return out, loaded


async def _stored_answer(agent: Agent, sid: str, ws: Path) -> str:
    """The answer as stored: replayed by ``session/load`` into a fresh update list."""
    agent.client.updates.pop(sid, None)
    await agent.conn.load_session(session_id=sid, cwd=str(ws), mcp_servers=[])
    return agent.client.text(sid)


async def test_a_retry_that_repeats_the_answer_is_not_shown_twice(wired: tuple[str, Agent],
                                                                  scripted: ScriptedServer, ws: Path) -> None:
    wire, agent = wired
    scripted.push(cut_stream(CUT_IN_TEXT[wire], ANSWER), ANSWER)
    chunks, stored = await _turn(agent, scripted, ws)
    assert len(scripted.requests) == 2
    assert chunks == [("thought", "think ", 0, None), ("thought", "about ", 0, None), ("thought", "it", 0, None),
                      ("text", "Hello ", 0, None), ("text", "brave ", 0, None), ("text", "new ", 0, None),
                      ("text", "world", 0, None)]
    assert stored == "Hello brave new world" == "".join(t for k, t, _, _ in chunks if k == "text")


async def test_a_retry_with_another_answer_replaces_the_shown_part(wired: tuple[str, Agent],
                                                                   scripted: ScriptedServer, ws: Path) -> None:
    wire, agent = wired
    scripted.push(cut_stream(CUT_IN_TEXT[wire], ANSWER), text("Hi there", reasoning="think again"))
    chunks, stored = await _turn(agent, scripted, ws)
    assert chunks == [("thought", "think ", 0, None), ("thought", "about ", 0, None), ("thought", "it", 0, None),
                      ("text", "Hello ", 0, None), ("thought", "think again", 1, 0), ("text", "Hi ", 1, None),
                      ("text", "there", 1, None)]
    assert stored == "Hi there" == "".join(t for k, t, m, _ in chunks if k == "text" and m == 1)


async def test_a_fallback_model_after_a_partial_answer(wired: tuple[str, Agent], scripted: ScriptedServer,
                                                       ws: Path) -> None:
    wire, agent = wired
    write_config(ws, fallback_models=["backup"], max_retries=0)
    scripted.push(cut_stream(CUT_IN_TEXT[wire], ANSWER), model="scripted-model")
    scripted.push(text("Hello brave new world!", reasoning="think about it"), model="backup")
    chunks, stored = await _turn(agent, scripted, ws)
    assert [r.model for r in scripted.requests] == ["scripted-model", "backup"]
    assert chunks[3:] == [("text", "Hello ", 0, None), ("text", "brave ", 0, None), ("text", "new ", 0, None),
                          ("text", "world!", 0, None)]
    assert stored == "Hello brave new world!"
    scripted.push(cut_stream(CUT_IN_TEXT[wire], ANSWER), model="scripted-model")
    scripted.push(text("Backup here"), model="backup")
    chunks, stored = await _turn(agent, scripted, ws)
    assert chunks[4:] == [("text", "Backup ", 1, 0), ("text", "here", 1, None)]
    assert stored == "Backup here"
