"""The faces' answer to a turn refused because another process drives the session (docs/protocol.md, docs/acp.md):
``data.reason: "sessionBusy"``, and the steers that refused turn had accepted as ``data.pendingSteer``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from agentls.agent.agent import AIAgent
from agentls.agent.scripted import ScriptedServer, text
from agentls.agent.sessions import SessionBusy, SessionStore
from agentls.server.acp.errors import store_errors as acp_store_errors
from agentls.server.lsp.lookup import StoreProblem
from agentls.server.lsp.lookup import store_errors as lsp_store_errors

STEER = "Keep the old name as an alias."


async def refused_turn(srv: ScriptedServer, tmp_path: Path, steer: bool) -> SessionBusy:
    """A real refusal: another store (another owner) holds the lease of the session an agent runs a turn on."""
    db = tmp_path / "sessions.db"
    async with SessionStore(db) as other, AIAgent(model="m", base_url=srv.openai_url, api_key="k", session_db=db,
                                                  workspace=tmp_path, titles="prompt") as agent:
        srv.push(text("first answer"))
        await agent.run_conversation("first")
        await other.acquire_lease(agent.session_id)
        turn = asyncio.ensure_future(agent.run_conversation("second"))
        while steer and not agent.running:
            await asyncio.sleep(0)
        assert not steer or agent.steer(STEER)
        with pytest.raises(SessionBusy) as refused:
            await turn
        await other.release_lease(agent.session_id)
    return refused.value


async def lsp_data(exc: SessionBusy) -> Any:
    async def handler() -> None:
        raise exc

    with pytest.raises(StoreProblem) as answer:
        await lsp_store_errors(handler)()
    return answer.value.data


def acp_data(exc: SessionBusy) -> Any:
    with pytest.raises(RequestError) as answer, acp_store_errors():
        raise exc
    return answer.value.data


@pytest.mark.parametrize("steer", [True, False])
async def test_the_refusal_hands_back_the_steers_the_turn_accepted(srv: ScriptedServer, tmp_path: Path,
                                                                   steer: bool) -> None:
    exc = await refused_turn(srv, tmp_path, steer)
    for data in (await lsp_data(exc), acp_data(exc)):
        assert data["reason"] == "sessionBusy" and data["runningElsewhere"]["pid"] > 0
        assert data.get("pendingSteer") == (STEER if steer else None)
