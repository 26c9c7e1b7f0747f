"""authenticate: a missing key and a wrong key are different answers; no model still lets the editor start."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp_harness.agent import NO_LOCAL_MODEL, agent_env, start_agent

from agentls.agent.scripted import ScriptedServer, text


@asynccontextmanager
async def rejecting_server() -> AsyncIterator[str]:
    """An OpenAI-style endpoint that answers 401 to everything."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        body = b'{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}'
        writer.write(b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: "
                     + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()
        await server.wait_closed()


async def test_missing_key(tmp_path: Path) -> None:
    env = agent_env(None, tmp_path, AGENTLS_MODEL="gpt-4.1-mini")
    async with start_agent(tmp_path, env) as agent:
        with pytest.raises(RequestError) as info:
            await agent.conn.authenticate(method_id="api-key")
        assert info.value.code == -32000 and "No API key found" in str(info.value)
        assert info.value.data["reason"] == "missing_key"
        assert "AGENTLS_API_KEY" in info.value.data["envVars"]
        agent.check_frames()


async def test_wrong_key(tmp_path: Path) -> None:
    async with rejecting_server() as url:
        env = agent_env(None, tmp_path, AGENTLS_MODEL="gpt-4.1-mini", AGENTLS_BASE_URL=url,
                        OPENAI_API_KEY="sk-wrong")
        async with start_agent(tmp_path, env) as agent:
            with pytest.raises(RequestError) as info:
                await agent.conn.authenticate(method_id="api-key")
            assert info.value.code == -32000 and "was rejected" in str(info.value)
            assert info.value.data["reason"] == "rejected_key" and info.value.data["envVar"] == "OPENAI_API_KEY"
            assert "sk-wrong" not in agent.stderr.read_text()
            agent.check_frames()


async def test_good_key_and_the_local_model(tmp_path: Path) -> None:
    async with ScriptedServer() as srv, start_agent(tmp_path, agent_env(srv, tmp_path)) as agent:
        answer = await agent.conn.authenticate(method_id="api-key")
        assert answer is not None and answer.field_meta == {"agentls": {"verified": True, "envVar":
                                                                        "AGENTLS_API_KEY"}}
        with pytest.raises(RequestError) as info:
            await agent.conn.authenticate(method_id="password")
        assert info.value.code == -32602
        agent.check_frames()


async def test_no_model_at_all(tmp_path: Path) -> None:
    """initialize and session/new work; prompting says how to get a model (auth_required)."""
    async with start_agent(tmp_path, agent_env(None, tmp_path), command=NO_LOCAL_MODEL) as agent:
        ws = tmp_path / "ws"
        ws.mkdir()
        sid = await agent.new_session(ws)
        with pytest.raises(RequestError) as info:
            await agent.conn.prompt(session_id=sid, prompt=[text_block("hello")])
        assert info.value.code == -32000
        assert "Two ways forward" in info.value.data["details"]
        with pytest.raises(RequestError) as local:
            await agent.conn.authenticate(method_id="local-model")
        assert local.value.data["reason"] == "local_model_missing"
        await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")  # the session is usable otherwise
        agent.check_frames()


async def test_the_local_model_notice_never_reaches_stdout(tmp_path: Path) -> None:
    """With no key and the local model installed, the notice goes to stderr (the prompt would show it)."""
    from agentls.agent.local import local_available

    if not local_available():
        pytest.skip("the local model is not installed in this environment")
    async with start_agent(tmp_path, agent_env(None, tmp_path)) as agent:
        ws = tmp_path / "ws"
        ws.mkdir()
        response = await agent.conn.new_session(cwd=str(ws), mcp_servers=[])
        assert response.config_options and response.config_options[0].current_value == "local"
        await agent.conn.authenticate(method_id="local-model")
        agent.check_frames()
        assert "embedded local model" in agent.stderr.read_text()
        raw = "".join(r["raw"] for r in agent.records() if r["dir"] == "out")
        assert "embedded local model" not in raw


async def test_a_session_made_without_a_model_takes_one_at_its_next_prompt(tmp_path: Path) -> None:
    """The no-model state: the session exists; once the configuration names a model, its next prompt
    runs (no restart, no new session), and a steer on it is no longer ``failed``."""
    async with ScriptedServer() as srv, start_agent(tmp_path, agent_env(None, tmp_path),
                                                    command=NO_LOCAL_MODEL) as agent:
        ws = tmp_path / "ws"
        ws.mkdir()
        sid = await agent.new_session(ws)
        assert (await agent.conn.ext_method("session/steering", {"sessionId": sid, "prompt": "x"}))["outcome"] \
            == "failed"
        with pytest.raises(RequestError):
            await agent.conn.prompt(session_id=sid, prompt=[text_block("hello")])
        (tmp_path / "config.toml").write_text(f'model = "scripted"\nbase_url = "{srv.openai_url}"\n')
        srv.push(text("now there is a model"))
        response = await agent.conn.prompt(session_id=sid, prompt=[text_block("hello again")])
        assert response.stop_reason == "end_turn" and agent.client.text(sid) == "now there is a model"
        agent.check_frames()
