"""A raw line-level client: for what a well-behaved SDK client never sends (broken JSON, bad frames)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp.transports import default_environment

from acp_harness.agent import AGENTLS, TEE


class RawAgent:
    def __init__(self, process: asyncio.subprocess.Process, frames: Path) -> None:
        self.process = process
        self.frames = frames
        self._next_id = 1000

    async def send(self, line: bytes | str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() if isinstance(line, str) else line)
        await self.process.stdin.drain()

    async def recv(self, timeout: float = 10.0) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        assert line, "the agent closed stdout"
        message: dict[str, Any] = json.loads(line)
        return message

    async def request(self, method: str, params: Any = None) -> dict[str, Any]:
        self._next_id += 1
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            frame["params"] = params
        await self.send(json.dumps(frame) + "\n")
        while True:
            message = await self.recv()
            if message.get("id") == self._next_id and "method" not in message:
                return message


@asynccontextmanager
async def raw_agent(home: Path, env: dict[str, str]) -> AsyncIterator[RawAgent]:
    home.mkdir(parents=True, exist_ok=True)
    frames = home / "frames.jsonl"
    with (home / "stderr.log").open("ab") as err:
        process = await asyncio.create_subprocess_exec(
            sys.executable, TEE, str(frames), "--", AGENTLS, "acp",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=err, env={**default_environment(), **env}, cwd=str(home))
        agent = RawAgent(process, frames)
        try:
            yield agent
        finally:
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()
