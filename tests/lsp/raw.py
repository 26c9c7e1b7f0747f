"""A byte-level LSP client for what a well-behaved client never sends (and for disconnects)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from .conftest import SERVER_COMMAND, SERVER_ENV


def frame(obj: Any) -> bytes:
    return body_frame(json.dumps(obj).encode())


def body_frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.answers: dict[Any, dict[str, Any]] = {}
        self.null_id_errors: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.request_errors: dict[str, dict[str, Any]] = {}  # method -> the error it is answered with
        self._changed = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read_all())

    @classmethod
    async def start(cls, *args: str) -> RawClient:
        proc = await asyncio.create_subprocess_exec(*SERVER_COMMAND, *args, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, env=SERVER_ENV)
        return cls(proc)

    async def _read_all(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = 0
            while (line := await stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            message = json.loads(await stream.readexactly(length))
            if "method" in message and "id" in message:
                self.server_requests.append(message)
                error = self.request_errors.get(message["method"])
                self.send({"jsonrpc": "2.0", "id": message["id"], **({"error": error} if error else {"result": None})})
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") is None:
                self.null_id_errors.append(message)
            else:
                self.answers[message["id"]] = message
            self._changed.set()

    def send(self, obj: Any) -> None:
        self.write(frame(obj))

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    async def answer(self, msg_id: Any, timeout: float = 20) -> dict[str, Any]:
        async def wait() -> dict[str, Any]:
            while msg_id not in self.answers:
                self._changed.clear()
                await self._changed.wait()
            return self.answers[msg_id]
        return await asyncio.wait_for(wait(), timeout)

    async def call(self, msg_id: Any, method: str, params: Any = None, timeout: float = 20) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return await self.answer(msg_id, timeout)

    async def send_and_code(self, msg_id: Any, message: dict[str, Any]) -> int:
        self.send(message)
        code: int = (await self.answer(msg_id))["error"]["code"]
        return code

    async def null_errors(self, count: int, timeout: float = 20) -> list[dict[str, Any]]:
        async def wait() -> list[dict[str, Any]]:
            while len(self.null_id_errors) < count:
                self._changed.clear()
                await self._changed.wait()
            return self.null_id_errors
        return await asyncio.wait_for(wait(), timeout)

    async def initialize(self, workspace: Path, options: dict[str, Any] | None = None,
                         capabilities: dict[str, Any] | None = None) -> None:
        params = {"processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": capabilities or {},
                  "initializationOptions": options or {}}
        assert "result" in await self.call("init", "initialize", params)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    async def close(self, timeout: float = 20) -> int:
        if self.proc.returncode is None and self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        code = await asyncio.wait_for(self.proc.wait(), timeout)
        await self._reader
        return code
