"""``agentls run`` as a real subprocess against ``python -m agentls.agent.scripted`` as a real subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentls.agent.version import __version__

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "agentls"
AGENTLS = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "agentls.server"]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLS_") and not k.endswith("_API_KEY")}
    env.update(AGENTLS_DATA_DIR=str(tmp_path / "data"), AGENTLS_CONFIG=str(tmp_path / "no-user-config.toml"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return env


@asynccontextmanager
async def provider(tmp_path: Path, *args: str) -> AsyncIterator[dict[str, str]]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "agentls.agent.scripted", *args, env=_env(tmp_path),
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        yield json.loads(await asyncio.wait_for(proc.stdout.readline(), 15))
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 10)


async def agentls(tmp_path: Path, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(*AGENTLS, *args, env=_env(tmp_path), cwd=tmp_path,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def _finish(proc: asyncio.subprocess.Process, timeout: float = 30) -> tuple[int, str, str]:
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _script(tmp_path: Path, replies: list[dict[str, Any]]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies))
    return str(path)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_run_completes_a_multi_tool_turn(tmp_path: Path, workspace: Path, wire: str) -> None:
    async with provider(tmp_path, "--responder", "demo") as urls:
        url = urls["openai_url"] if wire == "openai" else urls["anthropic_url"]
        proc = await agentls(tmp_path, "run", "--workspace", str(workspace), "--base-url", url, "--provider", wire,
                             "--model", "demo", "what is in this project?")
        code, out, err = await _finish(proc)
        async with httpx.AsyncClient() as client:
            seen = (await client.get(urls["url"] + "/_scripted/requests")).json()["requests"]
    assert code == 0, err
    assert "Here is what I found:" in out and "Demo project" in out
    turn = [r for r in seen if r["headers"].get("x-agentls-purpose", "turn") == "turn"]
    assert len(turn) == 3 and all(r["rejected"] is None for r in seen)
    assert (tmp_path / "data").exists()


async def test_run_with_a_failing_provider_exits_1(tmp_path: Path, workspace: Path) -> None:
    script = _script(tmp_path, [{"status": 401, "error_message": "invalid api key"}])
    async with provider(tmp_path, "--script", script) as urls:
        proc = await agentls(tmp_path, "run", "-w", str(workspace), "--base-url", urls["openai_url"], "-m", "m",
                             "hello")
        code, out, err = await _finish(proc)
    assert code == 1
    assert out.strip() == ""
    assert "auth" in err


async def test_sigint_during_a_slow_turn_exits_130(tmp_path: Path, workspace: Path) -> None:
    script = _script(tmp_path, [{"content": "far too late", "latency": 30}])
    async with provider(tmp_path, "--script", script) as urls, httpx.AsyncClient() as client:
        proc = await agentls(tmp_path, "run", "-w", str(workspace), "--base-url", urls["openai_url"], "-m", "m",
                             "take your time")
        for _ in range(300):
            if (await client.get(urls["url"] + "/_scripted/requests")).json()["requests"]:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("agentls never called the provider")
        proc.send_signal(signal.SIGINT)
        code, out, _ = await _finish(proc, timeout=10)
    assert code == 130
    assert "far too late" not in out


async def test_version(tmp_path: Path) -> None:
    code, out, _ = await _finish(await agentls(tmp_path, "--version"))
    assert code == 0 and out.strip() == f"agentls {__version__}"
