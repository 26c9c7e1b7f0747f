"""``python -m agentls.agent.scripted`` as a real subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from agentls.agent.scripted.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
USER = [{"role": "user", "content": "hi"}]


@asynccontextmanager
async def cli(*args: str) -> AsyncIterator[tuple[dict[str, str], asyncio.subprocess.Process]]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "agentls.agent.scripted", *args, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 15)
        yield json.loads(line), proc
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 10)


async def test_cli_demo_responder_both_wires() -> None:
    async with cli("--responder", "demo") as (urls, proc), httpx.AsyncClient(timeout=5) as c:
        assert set(urls) == {"url", "openai_url", "anthropic_url"}
        assert urls["openai_url"] == urls["url"] + "/v1" and urls["anthropic_url"] == urls["url"]
        r = await c.post(urls["openai_url"] + "/chat/completions", json={"model": "demo", "messages": USER})
        assert r.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "list_dir"
        r = await c.post(urls["anthropic_url"] + "/v1/messages", headers={"anthropic-version": "2023-06-01"},
                         json={"model": "demo", "max_tokens": 64, "messages": USER})
        assert r.json()["content"][0]["name"] == "list_dir"
        proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(proc.wait(), 10) == 0
        assert proc.stdout is not None and await proc.stdout.read() == b""  # exactly one line on stdout
        assert proc.stderr is not None and b"scripted provider on" in await proc.stderr.read()


async def test_cli_script_latency_and_control(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "first"},
                                  {"tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}]},
                                  {"status": 529, "error_message": "busy"}]))
    async with cli("--script", str(script), "--latency", "0.1", "--port", "0") as (urls, _proc), \
            httpx.AsyncClient(timeout=5) as c:
        url = urls["openai_url"] + "/chat/completions"
        t0 = time.monotonic()
        r = await c.post(url, json={"model": "m", "messages": USER})
        assert r.json()["choices"][0]["message"]["content"] == "first" and time.monotonic() - t0 >= 0.1
        r = await c.post(url, json={"model": "m", "messages": USER, "stream": True})
        assert '"name": "read_file"' in r.text
        r = await c.post(url, json={"model": "m", "messages": USER})
        assert r.status_code == 529 and r.json()["error"]["message"] == "busy"
        pushed = await c.post(urls["url"] + "/_scripted/push", json={"replies": [{"content": "pushed"}]})
        assert pushed.json() == {"queued": 1}
        r = await c.post(url, json={"model": "m", "messages": USER})
        assert r.json()["choices"][0]["message"]["content"] == "pushed"
        recorded: list[dict[str, Any]] = (await c.get(urls["url"] + "/_scripted/requests")).json()["requests"]
        assert len(recorded) == 4


def test_main_reports_a_bad_script(tmp_path: Path, capsys: Any) -> None:
    script = tmp_path / "bad.json"
    script.write_text(json.dumps([{"contnet": "typo"}]))
    assert main(["--script", str(script)]) == 1
    assert "unknown reply field(s) ['contnet']" in capsys.readouterr().err
