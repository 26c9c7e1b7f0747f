"""Child process for the resume tests: one agent turn on a session in a real SQLite file, killed mid-way.

``turn_child.py DB SESSION_ID BASE_URL WORKSPACE PROMPT``. The agent asks before writing a file; its host,
asked, kills this process with SIGKILL on the spot: a crash in the middle of a tool round, after the
results of the calls before it were saved. The parent kills it itself to crash elsewhere (in a model call).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agentls.agent.agent import AIAgent
from agentls.agent.disk_host import DiskHost
from agentls.agent.host import PermissionDecision, PermissionRequest
from agentls.agent.sandbox.policy import SandboxConfig


class DyingHost(DiskHost):
    async def request_permission(self, request: PermissionRequest) -> PermissionDecision | None:
        print(f"asked {request.tool_call_id}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        return None


async def main(db: str, session_id: str, base_url: str, workspace: str, prompt: str) -> None:
    async with AIAgent(model="m", base_url=base_url, provider="openai", api_key="k", session_db=db,
                       session_id=session_id, workspace=workspace, host=DyingHost(Path(workspace)),
                       approval="ask", titles="prompt", max_retries=0, sandbox=SandboxConfig(mode="off")) as agent:
        print("started", flush=True)
        result = await agent.run_conversation(prompt)
        print(f"ended {result.exit_reason.value}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
