"""``agentls run`` with MCP servers from the user config: started before its one turn, called by the scripted
model, refused without a way to ask, stopped at exit."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from agentls.agent.scripted import ScriptedServer, call, text, tools
from tests.mcp_client.helpers import alive, lab, started_pids, time_server

AGENTLS = str(Path(sys.executable).parent / "agentls")


def _toml(name: str, entry: dict[str, object]) -> str:
    return f"[mcp_servers.{name}]\ncommand = {json.dumps(entry['command'])}\nargs = {json.dumps(entry['args'])}\n"


async def _run(tmp_path: Path, srv: ScriptedServer, *args: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLS_") and not k.endswith("_API_KEY")}
    env.update(AGENTLS_DATA_DIR=str(tmp_path / "data"), AGENTLS_CONFIG=str(tmp_path / "config.toml"),
               AGENTLS_API_KEY="k")
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    proc = await asyncio.create_subprocess_exec(
        AGENTLS, "run", "--workspace", str(ws), "--base-url", srv.openai_url, "--model", "m", "--no-persist", *args,
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_run_calls_mcp_tools_and_leaves_nothing_running(tmp_path: Path, srv: ScriptedServer) -> None:
    state = tmp_path / "state"
    (tmp_path / "config.toml").write_text(_toml("lab", lab("ok", state)) + _toml("time", time_server())
                                          + '[mcp_servers.stuck]\ncommand = "/no/such/server"\n')
    srv.push(tools(call("mcp__lab__echo", {"text": "from run"}), call("mcp__time__get_current_time",
                                                                        {"timezone": "UTC"})), text("done"))
    code, out, err = await _run(tmp_path, srv, "--approval", "yolo", "use them")
    assert code == 0, err
    assert out.strip() == "done"
    assert "MCP server stuck failed" in err  # reported, and the turn went on
    tool_texts = [m["content"] for m in srv.requests[-1].messages if m["role"] == "tool"]
    assert tool_texts[0] == "echo: from run" and "UTC" in tool_texts[1]
    assert "mcp__lab__echo" in srv.requests[0].tools  # ready before the first model call
    pids = started_pids(state)
    assert pids and not any(alive(p) for p in pids)


async def test_run_cannot_ask_so_only_read_only_tools_run(tmp_path: Path, srv: ScriptedServer) -> None:
    (tmp_path / "config.toml").write_text(_toml("lab", lab()))
    srv.push(tools(call("mcp__lab__echo", {"text": "x"}), call("mcp__lab__peek", {"key": "k"})), text("ok"))
    code, out, err = await _run(tmp_path, srv, "try")  # run's default approval is auto-edit
    assert code == 0, err
    echo, peek = [m["content"] for m in srv.requests[-1].messages if m["role"] == "tool"]
    assert "needs the user's approval" in echo and "tool call" in echo
    assert peek == "peeked k"
