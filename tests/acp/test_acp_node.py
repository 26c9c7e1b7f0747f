"""The official npm ACP SDK (``@agentclientprotocol/sdk``, Node 20) drives one full prompt with a tool call."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from acp.transports import default_environment
from acp_harness.agent import AGENTLS, TEE, agent_env
from acp_harness.frames import read_records, validate_frames

from agentls.agent.scripted import ScriptedServer, call, text, tools

NODE_DIR = Path(__file__).with_name("node")


def _node_ready() -> str:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js 20+ and npm are needed for the npm ACP SDK test (not found on PATH)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 20:
        pytest.skip(f"the npm ACP SDK test needs Node 20+, found {version}")
    if not (NODE_DIR / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        subprocess.run([npm, "ci", "--silent", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True,
                       capture_output=True, timeout=300)
    return node


async def test_npm_sdk_client_runs_a_prompt_with_a_tool_call(tmp_path: Path) -> None:
    node = _node_ready()
    ws = tmp_path / "ws"
    ws.mkdir()
    frames = tmp_path / "frames.jsonl"
    async with ScriptedServer() as srv:
        srv.push(tools(call("write_file", {"path": "hello.txt", "content": "hello\n"})), text("Created hello.txt."))
        env = {**default_environment(), **agent_env(srv, tmp_path)}
        process = await asyncio.create_subprocess_exec(
            node, str(NODE_DIR / "client.mjs"), str(ws), sys.executable, TEE, str(frames), "--", AGENTLS, "acp",
            cwd=str(NODE_DIR), env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    summary = json.loads(out.decode().strip().splitlines()[-1])
    assert summary["agent"] == "agentls" and summary["steering"] is True
    assert summary["modes"] == ["ask", "auto-edit", "yolo", "plan"]
    assert summary["stopReason"] == "end_turn"
    assert {"tool_call", "tool_call_update", "agent_message_chunk"} <= set(summary["kinds"])
    assert summary["diffs"][0]["newText"] == "hello\n"
    # Read, ask, read again under the file's lock (the buffer may have changed while the user decided), write.
    assert [c[0] for c in summary["calls"]] == ["fs/read_text_file", "session/request_permission",
                                                "fs/read_text_file", "fs/write_text_file"]
    assert (ws / "hello.txt").read_text() == "hello\n"
    report = validate_frames(read_records(frames), compaction_declared=False)
    assert not report.errors, report.errors
