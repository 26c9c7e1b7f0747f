"""Starting the real ``agentls acp`` behind the recording tee, with the test client on the other end."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import ClientCapabilities, FileSystemCapabilities

from acp_harness.client import TestClient
from acp_harness.frames import read_records, validate_frames
from agentls.agent.scripted import ScriptedServer

AGENTLS = str(Path(sys.executable).parent / "agentls")
TEE = str(Path(__file__).with_name("tee.py"))
MODEL = "scripted-model"
# ``agentls acp`` in a process where the embedded local model counts as not installed.
NO_LOCAL_MODEL = [sys.executable, "-c", ("import agentls.agent.local as m; m.local_available = lambda: False; "
                                        "from agentls.server.cli import main; raise SystemExit(main(['acp']))")]
FULL_CAPS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True)


@dataclass
class Agent:
    """One running ``agentls acp`` with its client side."""

    conn: ClientSideConnection
    client: TestClient
    frames: Path
    stderr: Path
    compaction: bool
    home: Path

    def mark(self) -> int:
        return len(self.frames.read_text().splitlines()) if self.frames.exists() else 0

    def records(self, start: int = 0) -> list[dict[str, str]]:
        return read_records(self.frames, start)

    def check_frames(self, start: int = 0) -> None:
        report = validate_frames(self.records(start), compaction_declared=self.compaction)
        assert not report.errors, "frames the agent sent are not valid ACP:\n" + "\n".join(report.errors[:20])

    def sent(self, start: int = 0) -> list[dict[str, Any]]:
        """The agent's frames since ``start``, parsed."""
        return [json.loads(r["raw"]) for r in self.records(start) if r["dir"] == "out"]

    async def new_session(self, cwd: Path, **kwargs: Any) -> str:
        response = await self.conn.new_session(cwd=str(cwd), mcp_servers=[], **kwargs)
        return response.session_id


def agent_env(srv: ScriptedServer | None, home: Path, **extra: str) -> dict[str, str]:
    env = {"AGENTLS_DATA_DIR": str(home / "data"), "AGENTLS_CONFIG": str(home / "config.toml"),
           "AGENTLS_TITLES": "prompt", "AGENTLS_LOG_LEVEL": "INFO", "HOME": str(home),
           "XDG_CACHE_HOME": str(home / "cache")}
    if srv is not None:
        env.update({"AGENTLS_MODEL": MODEL, "AGENTLS_BASE_URL": srv.openai_url, "AGENTLS_API_KEY": "test-key"})
    env.update(extra)
    return env


@asynccontextmanager
async def start_agent(home: Path, env: dict[str, str], *, caps: ClientCapabilities | None = FULL_CAPS,
                      extra_caps: dict[str, Any] | None = None, initialize: bool = True,
                      command: list[str] | None = None) -> AsyncIterator[Agent]:
    home.mkdir(parents=True, exist_ok=True)
    frames, stderr = home / "frames.jsonl", home / "stderr.log"
    tee_args = [TEE, str(frames)] + (["--caps", json.dumps(extra_caps)] if extra_caps else []) + ["--"]
    tee_args += command or [AGENTLS, "acp"]
    client = TestClient()
    with stderr.open("ab") as err:
        async with spawn_agent_process(client, sys.executable, *tee_args, env=env, cwd=str(home),
                                       transport_kwargs={"stderr": err.fileno(), "shutdown_timeout": 15.0},
                                       use_unstable_protocol=True) as (conn, _proc):
            agent = Agent(conn, client, frames, stderr, bool(extra_caps and "session" in extra_caps), home)
            if initialize:
                await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
            yield agent



def write_config(ws: Path, **settings: Any) -> None:
    lines = [f"{k} = {json.dumps(v)}" for k, v in settings.items()]
    (ws / ".agentls.toml").write_text("\n".join(lines) + "\n")
