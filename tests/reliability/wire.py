"""Our own clients for ``agentls lsp`` (Content-Length framing) and ``agentls acp`` (one JSON object per
line) over raw pipes, every byte recorded.

The reliability suites need what a polite client library hides: the raw frames the server wrote (to
grep them for secrets and canaries), kill -9, half-written frames, late or missing answers to the
server's requests. Every spawned server carries a marker in its environment, which its child
processes inherit, so ``marked_pids`` finds anything it left running.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import os
import signal
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

MARK_VAR = "AGENTLS_RELIABILITY_MARK"
Handler = Callable[[Any], Any]  # params -> result (or an awaitable of it); raise LspError to answer an error


class LspError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def frame(obj: Any) -> bytes:
    return body_frame(json.dumps(obj).encode())


def body_frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def server_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTLS_", "OPENAI_", "ANTHROPIC_"))}
    env.update({"HOME": str(home), "AGENTLS_DATA_DIR": str(home / "data"),
                "AGENTLS_CONFIG": str(home / "no-config.toml"), "AGENTLS_API_KEY": "scripted-key",
                "XDG_CACHE_HOME": str(home / "cache"), MARK_VAR: uuid.uuid4().hex})
    env.update(extra)
    return env


def marked_pids(mark: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries ``mark``."""
    needle = f"{MARK_VAR}={mark}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != "Z":
            found.append(int(name))
    return found


class RpcProc:
    """One server process and the client side of its pipes (framing in the subclasses)."""

    FACE = ""

    def __init__(self, proc: asyncio.subprocess.Process, mark: str) -> None:
        self.proc = proc
        self.mark = mark
        self.sent = bytearray()  # every byte the server wrote to stdout
        self.messages: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []  # agent/update (session/update) params
        self.server_requests: list[dict[str, Any]] = []
        self.null_errors: list[dict[str, Any]] = []
        self.garbage: list[bytes] = []  # output that is not a JSON-RPC message: a protocol bug of the server
        self.answer_counts: dict[Any, int] = {}
        self.handlers: dict[str, Handler] = {}
        self.on_update: Callable[[dict[str, Any]], None] | None = None
        self._futures: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.closed = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read_all())

    @classmethod
    async def start(cls, env: dict[str, str], cwd: Path, *args: str, stderr: Path | None = None) -> Self:
        """``agentls <face>`` with ``args``; its stderr goes to ``stderr`` (appended) when given."""
        with open(stderr, "ab") if stderr else contextlib.nullcontext() as err:  # noqa: ASYNC230
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "agentls.server", cls.FACE, *args, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=err, env=env, cwd=str(cwd), limit=1 << 26)
        return cls(proc, env[MARK_VAR])

    async def _read_message(self, stream: asyncio.StreamReader) -> dict[str, Any] | None:
        raise NotImplementedError

    def _parse(self, data: bytes) -> dict[str, Any]:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))  # servers echo deep input back in validation errors
        try:
            message = json.loads(data)
        except (ValueError, RecursionError):
            message = None
        finally:
            sys.setrecursionlimit(limit)
        if not isinstance(message, dict):
            self.garbage.append(bytes(data))
            return {}
        return message

    def encode(self, obj: Any) -> bytes:
        raise NotImplementedError

    # ----------------------------------------------------------------- reading
    async def _read_all(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        try:
            while (message := await self._read_message(stream)) is not None:
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            self.closed.set()
            for fut in self._futures.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("the server closed its stdout"))
                    fut.exception()  # retrieved: a waiter that gave up must not log it

    def _dispatch(self, msg: dict[str, Any]) -> None:
        if not msg:
            return
        self.messages.append(msg)
        method = msg.get("method")
        if method is not None and "id" in msg:
            self.server_requests.append(msg)
            task = asyncio.ensure_future(self._serve(msg))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif method in ("agent/update", "session/update"):
            self.updates.append(msg["params"])
            if self.on_update is not None:
                self.on_update(msg["params"])
        elif method is None:
            msg_id = msg.get("id")
            if msg_id is None:
                self.null_errors.append(msg)
                return
            self.answer_counts[msg_id] = self.answer_counts.get(msg_id, 0) + 1
            fut = self._futures.get(msg_id)
            if fut is None:
                fut = self._futures[msg_id] = asyncio.get_running_loop().create_future()
            if not fut.done():
                fut.set_result(msg)

    async def _serve(self, msg: dict[str, Any]) -> None:
        handler = self.handlers.get(msg["method"])
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"]}
        if handler is None:
            reply["error"] = {"code": -32601, "message": f"no handler for {msg['method']}"}
        else:
            try:
                result = handler(msg.get("params"))
                if inspect.isawaitable(result):
                    result = await result
                reply["result"] = result
            except LspError as exc:
                reply["error"] = {"code": exc.code, "message": str(exc)}
        self.write(self.encode(reply))

    # ----------------------------------------------------------------- writing
    def write(self, data: bytes) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing() or self.proc.returncode is not None:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            stdin.write(data)

    async def drain(self) -> None:
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            with contextlib.suppress(ConnectionError, RuntimeError):
                await stdin.drain()

    def send(self, obj: Any) -> None:
        self.write(self.encode(obj))

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def answer(self, msg_id: Any) -> asyncio.Future[dict[str, Any]]:
        fut = self._futures.get(msg_id)
        if fut is None:
            fut = self._futures[msg_id] = asyncio.get_running_loop().create_future()
            if self.closed.is_set():  # no answer can come any more
                fut.set_exception(ConnectionError("the server closed its stdout"))
                fut.exception()
        return fut

    def start_request(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        """Send a request without waiting; returns its id (``answer(id)`` is its answer)."""
        msg_id = f"c{next(self._ids)}" if msg_id is None else msg_id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.answer(msg_id)
        self.send(msg)
        return msg_id

    async def call(self, method: str, params: Any = None, timeout: float = 30) -> dict[str, Any]:
        """The whole answer message (``result`` or ``error``)."""
        msg_id = self.start_request(method, params)
        return await asyncio.wait_for(asyncio.shield(self.answer(msg_id)), timeout)

    async def result(self, method: str, params: Any = None, timeout: float = 30) -> Any:
        msg = await self.call(method, params, timeout)
        assert "result" in msg, f"{method} failed: {msg.get('error')}"
        return msg["result"]

    def updates_of(self, kind: str, session_id: str | None = None) -> list[dict[str, Any]]:
        return [u["update"] for u in self.updates if u["update"].get("sessionUpdate") == kind
                and (session_id is None or u["sessionId"] == session_id)]

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    def kill9(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGKILL)

    async def wait(self, timeout: float = 30) -> int:
        try:
            return await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            self.kill9()
            await self.proc.wait()
            raise AssertionError(f"the server did not exit within {timeout} s") from None

    def close_stdin(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()

    async def aclose(self) -> None:
        """Make sure the process is gone and our tasks ended (idempotent)."""
        if self.alive:
            self.kill9()
        await self.proc.wait()
        self.close_stdin()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(self._reader, *self._tasks, return_exceptions=True)


class LspProc(RpcProc):
    """``agentls lsp``: Content-Length framing."""

    FACE = "lsp"

    def encode(self, obj: Any) -> bytes:
        return frame(obj)

    async def _read_message(self, stream: asyncio.StreamReader) -> dict[str, Any] | None:
        length = -1
        while True:
            line = await stream.readline()
            if not line:
                return None
            self.sent += line
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        body = await stream.readexactly(length)
        self.sent += body
        return self._parse(body)

    async def initialize(self, root: Path, options: dict[str, Any], *, agent: dict[str, Any] | None = None,
                         capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        caps = dict(capabilities or {})
        caps.setdefault("experimental", {})["agent"] = agent if agent is not None else {"updates": True}
        result: dict[str, Any] = await self.result("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": caps,
            "initializationOptions": options}, timeout=60)
        self.notify("initialized", {})
        return result

    async def new_session(self, **params: Any) -> str:
        session_id: str = (await self.result("agent/newSession", params))["sessionId"]
        return session_id

    async def shutdown(self, timeout: float = 30) -> int:
        """shutdown, exit, and the exit code; kill -9 if it does not exit in time."""
        try:
            if self.alive:
                await self.call("shutdown", None, timeout)
                self.notify("exit")
            return await self.wait(timeout)
        finally:
            await self.aclose()



class AcpProc(RpcProc):
    """``agentls acp``: one JSON object per line."""

    FACE = "acp"

    def encode(self, obj: Any) -> bytes:
        return json.dumps(obj).encode() + b"\n"

    async def _read_message(self, stream: asyncio.StreamReader) -> dict[str, Any] | None:
        line = await stream.readline()
        if not line:
            return None
        self.sent += line
        return self._parse(line)

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = await self.result("initialize", {
            "protocolVersion": 1, "clientCapabilities": capabilities or {}}, timeout=60)
        return result

    async def new_session(self, cwd: Path) -> str:
        session_id: str = (await self.result("session/new", {"cwd": str(cwd), "mcpServers": []}, 60))["sessionId"]
        return session_id
