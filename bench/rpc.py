"""A minimal JSON-RPC peer over a child's stdio, for the face benchmarks (no framework in the way).

``framing="lsp"`` is ``Content-Length`` framing; ``framing="ndjson"`` is one JSON object per line (ACP).
Every incoming message is stamped with ``time.monotonic()`` as soon as its bytes are complete, before
it is parsed, so the latency figures include no client-side parsing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

Framing = Literal["lsp", "ndjson"]
NotificationHandler = Callable[[str, Any, float], None]
RequestHandler = Callable[[str, Any], Any]


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error


class Peer:
    def __init__(self, proc: asyncio.subprocess.Process, framing: Framing) -> None:
        self.proc = proc
        self.framing = framing
        self.on_notification: NotificationHandler | None = None
        self.on_request: RequestHandler | None = None
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def spawn(cls, argv: list[str], framing: Framing, *, env: dict[str, str] | None = None,
                    cwd: str | Path | None = None, stderr: Path | None = None, inherit_env: bool = True) -> Peer:
        err: int = asyncio.subprocess.DEVNULL
        if stderr is not None:
            err = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=err,
                env={**(os.environ if inherit_env else {}), **(env or {})}, cwd=cwd, limit=64 * 1024 * 1024)
        finally:
            if stderr is not None:
                os.close(err)
        return cls(proc, framing)

    @property
    def pid(self) -> int:
        return self.proc.pid

    # ------------------------------------------------------------ sending
    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        assert self.proc.stdin is not None
        if self.framing == "lsp":
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
        else:
            self.proc.stdin.write(body + b"\n")

    def send_request(self, method: str, params: Any = None) -> asyncio.Future[Any]:
        """Send now; the future resolves with the result (or RpcError)."""
        self._next_id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = fut
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self._write(msg)
        return fut

    async def request(self, method: str, params: Any = None, timeout: float = 120.0) -> Any:
        return await asyncio.wait_for(self.send_request(method, params), timeout)

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._write(msg)

    # ------------------------------------------------------------ receiving
    async def _read_frame(self) -> bytes | None:
        out = self.proc.stdout
        assert out is not None
        if self.framing == "ndjson":
            line = await out.readline()
            return line or None
        length = None
        while True:
            header = await out.readline()
            if not header:
                return None
            header = header.strip()
            if not header:
                break
            name, _, value = header.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length is None:
            return None
        return await out.readexactly(length)

    async def _read_loop(self) -> None:
        try:
            while True:
                frame = await self._read_frame()
                if frame is None:
                    break
                stamp = time.monotonic()
                if not frame.strip():
                    continue
                self._dispatch(json.loads(frame), stamp)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("the server closed its output"))

    def _dispatch(self, msg: dict[str, Any], stamp: float) -> None:
        if "method" in msg:
            if "id" in msg:  # a server -> client request
                try:
                    result = self.on_request(msg["method"], msg.get("params")) if self.on_request else None
                    self._write({"jsonrpc": "2.0", "id": msg["id"], "result": result})
                except RpcError as exc:
                    self._write({"jsonrpc": "2.0", "id": msg["id"], "error": exc.error})
            elif self.on_notification is not None:
                self.on_notification(msg["method"], msg.get("params"), stamp)
            return
        fut = self._pending.pop(msg.get("id"), None)  # type: ignore[arg-type]
        if fut is None or fut.done():
            return
        if "error" in msg:
            fut.set_exception(RpcError(msg["error"]))
        else:
            fut.set_result(msg.get("result"))

    # ------------------------------------------------------------ ending
    async def close(self, graceful: Callable[[], Any] | None = None, timeout: float = 5.0) -> None:
        """Run ``graceful`` (e.g. shutdown/exit), close stdin, wait; kill if it lingers."""
        with contextlib.suppress(Exception):
            if graceful is not None:
                await asyncio.wait_for(graceful(), timeout)
        with contextlib.suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader


async def lsp_shutdown(peer: Peer) -> None:
    with contextlib.suppress(RpcError, ConnectionError):
        await peer.request("shutdown", None, timeout=5)
    peer.notify("exit")


def lsp_initialize_params(root: Path, options: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "processId": os.getpid(),
        "clientInfo": {"name": "agentls-bench", "version": "1"},
        "rootUri": root.resolve().as_uri(),
        "workspaceFolders": [{"uri": root.resolve().as_uri(), "name": root.name}],
        "capabilities": {
            "workspace": {"workspaceEdit": {"documentChanges": True}, "applyEdit": True},
            "window": {"workDoneProgress": False},
            "experimental": {"agent": {"terminal": False, "permissions": False, "updates": True}},
        },
        "initializationOptions": options or {},
    }


def agentls_command() -> list[str]:
    """``agentls`` as an editor starts it: the console script next to this interpreter."""
    import sys

    script = Path(sys.executable).parent / "agentls"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "agentls.server"]


def face_available(name: str) -> bool:
    """Whether ``server.<name>`` is importable (the faces land while these benchmarks are written)."""
    import importlib.util

    try:
        return importlib.util.find_spec(f"server.{name}") is not None
    except (ImportError, ValueError):
        return False
