"""A small HTTP/1.1 server on asyncio streams that plays scripted model replies."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import TracebackType
from typing import Any, Self

from . import anthropic_wire, openai_wire, responses_wire
from .recorded import Issued, sse_frames
from .http11 import LAST_CHUNK, BadRequest, Conn, HttpRequest, chunk, reason, response_head
from .replies import RecordedRequest, RenderContext, Reply, Responder, WireFormat, error, text
from .responders import get_responder
from .validate import validate_anthropic, validate_openai

logger = logging.getLogger("agentls.agent.scripted")

_ROUTES: dict[str, WireFormat] = {"/v1/chat/completions": openai_wire.WIRE, "/v1/messages": anthropic_wire.WIRE,
                                  "/v1/responses": responses_wire.WIRE}
_NOT_JSON = b"<html><body><h1>502 Bad Gateway</h1> this is not JSON</body></html>"


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


class ScriptedServer:
    """A real OpenAI + Anthropic compatible HTTP server whose answers are scripted by the test."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, strict: bool = True) -> None:
        self.host = host
        self.port = port
        self.strict = strict
        self.requests: list[RecordedRequest] = []
        self._queues: dict[str | None, deque[Reply]] = {}
        self._responders: dict[str | None, Responder] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: asyncio.Server | None = None
        self._conns: set[asyncio.Task[Any]] = set()
        self.issued = Issued()  # what the model side handed out that must come back unchanged

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> Self:
        if self._server is None:
            self._server = await asyncio.start_server(self._on_connection, self.host, self.port,
                                                      limit=1 << 20, backlog=1024)
            self.port = self._server.sockets[0].getsockname()[1]
            logger.debug("scripted provider listening on %s", self.base_url)
        return self

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        conns = list(self._conns)
        for task in conns:
            task.cancel()
        if conns:
            await asyncio.gather(*conns, return_exceptions=True)
        await server.wait_closed()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    @classmethod
    @contextmanager
    def run_in_thread(cls, host: str = "127.0.0.1", port: int = 0, strict: bool = True
                      ) -> Iterator[ScriptedServer]:
        """Serve on a private event loop in a daemon thread (for sync tests and benchmarks)."""
        srv = cls(host, port, strict)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="scripted-provider", daemon=True)
        thread.start()
        try:
            asyncio.run_coroutine_threadsafe(srv.start(), loop).result(timeout=10)
            yield srv
        finally:
            with suppress(Exception):
                asyncio.run_coroutine_threadsafe(srv.stop(), loop).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            if not thread.is_alive():
                loop.close()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("ScriptedServer is not started (await srv.start() or use 'async with')")
        return f"http://{self.host}:{self.port}"

    @property
    def openai_url(self) -> str:
        return self.base_url + "/v1"

    @property
    def anthropic_url(self) -> str:
        return self.base_url

    # ------------------------------------------------------------ scripting
    def push(self, *replies: Reply, model: str | None = None) -> None:
        """Queue replies (FIFO) for ``model``, or on the shared queue when ``model`` is None."""
        for r in replies:
            if not isinstance(r, Reply):
                raise TypeError(f"push() takes Reply objects (use text(), tools(call(...)), ...), got {r!r}")
        with self._lock:
            self._queues.setdefault(model, deque()).extend(replies)

    def set_responder(self, fn: Responder | None, model: str | None = None) -> None:
        """Answer with ``fn(request)`` when the queues are empty (None removes it)."""
        with self._lock:
            if fn is None:
                self._responders.pop(model, None)
            else:
                self._responders[model] = fn

    def clear(self) -> None:
        """Drop queued replies, responders and recorded requests."""
        with self._lock:
            self._queues.clear()
            self._responders.clear()
            self.requests.clear()
            self.issued = Issued()

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    async def _next_reply(self, rec: RecordedRequest) -> Reply:
        # agentls marks auxiliary calls with x-agentls-purpose (title, summary, grace). A queue or responder
        # under "purpose:<name>" answers them first; untargeted title requests get an automatic title so
        # scripts for the turn itself are never consumed by the background titler.
        purpose = rec.headers.get("x-agentls-purpose", "turn")
        if purpose != "turn":
            aux_key = f"purpose:{purpose}"
            with self._lock:
                queue = self._queues.get(aux_key)
                if queue:
                    return queue.popleft()
                aux = self._responders.get(aux_key)
            if aux is not None:
                return await self._respond(aux, rec)
            if purpose == "title":
                return text("Scripted session")
        with self._lock:
            for key in (rec.model, None):
                queue = self._queues.get(key)
                if queue:
                    return queue.popleft()
            fn = self._responders.get(rec.model) or self._responders.get(None)
        if fn is None:
            message = f"scripted provider: no reply queued for model '{rec.model}'"
            logger.warning("%s (request #%d)", message, len(self.requests))
            return error(500, message)
        return await self._respond(fn, rec)

    async def _respond(self, fn: Responder, rec: RecordedRequest) -> Reply:
        try:
            result = fn(rec)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            logger.exception("scripted provider: responder failed")
            return error(500, f"scripted provider: responder raised {type(exc).__name__}: {exc}")
        if not isinstance(result, Reply):
            return error(500, f"scripted provider: responder returned {type(result).__name__}, not a Reply")
        return result

    # ------------------------------------------------------------ HTTP
    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._conns.add(task)
        conn = Conn(reader, writer)
        try:
            while (req := await conn.read_request()) is not None and await self._dispatch(conn, req):
                pass
        except BadRequest as exc:
            with suppress(ConnectionError):
                await self._send_json(conn, 400, {"error": {"message": str(exc)}}, {}, False)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass  # stop() cancels us; ending normally keeps asyncio's stream callback quiet on 3.11
        except Exception:
            logger.exception("scripted provider: connection handler failed")
        finally:
            if task is not None:
                self._conns.discard(task)
            conn.close()

    async def _dispatch(self, conn: Conn, req: HttpRequest) -> bool:
        """Answer one request; True to keep the connection open."""
        method, path, keep = req.method, req.path, req.keep_alive
        wire = _ROUTES.get(path)
        if wire is not None and method == "POST":
            return await self._provider(conn, wire, req)
        if path.startswith("/_scripted/"):
            status, obj = self._control(method, path, req.body)
            return await self._send_json(conn, status, obj, {}, keep)
        if path == "/v1/models" and method == "GET":
            return await self._send_json(conn, 200, self._models("anthropic-version" in req.headers), {}, keep)
        status = 405 if wire is not None else 404
        message = f"scripted provider: no route for {method} {path}"
        return await self._send_json(conn, status, openai_wire.error_body(status, message, None, None), {}, keep)

    async def _send_json(self, conn: Conn, status: int, obj: Any, extra: dict[str, str], keep: bool) -> bool:
        return await self._send_plain(conn, status, json.dumps(obj).encode(), extra, keep)

    async def _send_plain(self, conn: Conn, status: int, body: bytes, extra: dict[str, str], keep: bool,
                          reply: Reply | None = None) -> bool:
        head = response_head(status, "application/json", extra, keep, len(body))
        if reply is None or (reply.stall <= 0 and reply.reset is None):
            await conn.send(head, body)
            return keep
        await conn.send(head)
        if reply.stall > 0 and not await conn.pause(reply.stall):
            return False
        if reply.reset == "during":
            await conn.send(body[: len(body) // 2])
            conn.abort()
            return False
        await conn.send(body)
        return keep

    # ------------------------------------------------------------ provider requests
    async def _provider(self, conn: Conn, wire: WireFormat, req: HttpRequest) -> bool:
        keep, raw = req.keep_alive, req.body
        rec = RecordedRequest(req.path, req.headers, {}, wire.name, "", False, time.monotonic(), raw)
        self.requests.append(rec)
        try:
            body = json.loads(raw)
        except ValueError as exc:
            body = None
            rec.rejected = f"the request body is not valid JSON: {exc}"
        if body is not None and not isinstance(body, dict):
            rec.rejected = "the request body must be a JSON object"
        if isinstance(body, dict):
            rec.body = body
            model = body.get("model")
            rec.model = model if isinstance(model, str) else ""
            rec.stream = body.get("stream") is True
            if self.strict:
                rec.rejected = (validate_openai(body) if wire.name == "openai"
                                else validate_anthropic(body, req.headers) if wire.name == "anthropic"
                                else None) or self.issued.check(wire.name, body, rec.model)
        if rec.rejected is not None:
            logger.warning("scripted provider: rejected %s request #%d: %s", wire.name, len(self.requests),
                           rec.rejected)
            obj = wire.error_body(400, rec.rejected, None, None)
            return await self._send_json(conn, 400, obj, {}, keep)
        reply = await self._next_reply(rec)
        try:
            keep = await self._play(conn, wire, rec, reply, keep)
            if not await conn.end_watch() or conn.gone:
                rec.client_disconnected = True
                keep = False
        except (ConnectionError, asyncio.IncompleteReadError):
            rec.client_disconnected = True
            return False
        if logger.isEnabledFor(logging.INFO):
            logger.info("%s %s model=%s stream=%s -> %s", "POST", req.path, rec.model, rec.stream, reply.status)
        return keep

    async def _play(self, conn: Conn, wire: WireFormat, rec: RecordedRequest, reply: Reply, keep: bool) -> bool:
        if reply.latency > 0 and not await conn.pause(reply.latency):
            return False
        if reply.reset == "before":
            conn.abort()
            return False
        extra = {"x-request-id" if wire.name == "openai" else "request-id": self._new_id("req_")}
        if reply.retry_after is not None:
            extra["retry-after"] = _seconds(reply.retry_after)
        extra.update(reply.headers)
        if reply.status != 200:
            message = reply.error_message or f"scripted error: HTTP {reply.status} {reason(reply.status)}"
            err = wire.error_body(reply.status, message, reply.error_type, reply.error_code)
            return await self._send_plain(conn, reply.status, json.dumps(err).encode(), extra, keep, reply)
        include_usage = isinstance(rec.body.get("stream_options"), dict) and bool(
            rec.body["stream_options"].get("include_usage"))
        ctx = RenderContext(rec.model or "scripted", len(rec.raw), include_usage, self._new_id)
        if reply.recorded is not None:
            self.issued.learn(wire.name, reply.recorded, reply.recorded_sse)
            if reply.recorded_sse:
                return await self._stream(conn, sse_frames(reply.recorded), reply, extra, keep)
            return await self._send_plain(conn, 200, reply.recorded.encode(), extra, keep, reply)
        if reply.invalid_json and not rec.stream:
            return await self._send_plain(conn, 200, _NOT_JSON, extra, keep, reply)
        if rec.stream or reply.malformed_sse:
            if reply.malformed_sse or reply.invalid_json:
                frames = wire.garbage_frames(reply.malformed_sse)
            else:
                frames = wire.sse_frames(reply, ctx)
                self.issued.learn(wire.name, b"".join(frames).decode(), True)
            return await self._stream(conn, frames, reply, extra, keep)
        body = json.dumps(wire.json_body(reply, ctx), ensure_ascii=False).encode()
        self.issued.learn(wire.name, body.decode(), False)
        return await self._send_plain(conn, 200, body, extra, keep, reply)

    async def _stream(self, conn: Conn, frames: list[bytes], reply: Reply, extra: dict[str, str],
                      keep: bool) -> bool:
        limit = len(frames)
        if reply.cut_after_chunks is not None:
            limit = min(limit, max(0, reply.cut_after_chunks))
        if reply.reset == "during":
            limit = min(limit, max(1, min(3, len(frames) // 2)))
        keep = keep and limit == len(frames)
        head = response_head(200, "text/event-stream; charset=utf-8", extra, keep, None)
        if reply.chunk_delay <= 0 and reply.stall <= 0:
            await conn.send(head, *[chunk(f) for f in frames[:limit]])
        else:
            await conn.send(head)
            for i, frame in enumerate(frames[:limit]):
                if i > 0 and reply.chunk_delay > 0 and not await conn.pause(reply.chunk_delay):
                    return False
                await conn.send(chunk(frame))
                if i == 0 and reply.stall > 0 and not await conn.pause(reply.stall):
                    return False
        if reply.reset == "during":
            conn.abort()
            return False
        await conn.send(LAST_CHUNK)
        return keep

    # ------------------------------------------------------------ control endpoints
    def _control(self, method: str, path: str, raw: bytes) -> tuple[int, Any]:
        action = path[len("/_scripted/"):]
        try:
            if method == "GET" and action == "requests":
                return 200, {"requests": [r.to_json() for r in self.requests]}
            if method != "POST" or action not in ("push", "responder", "clear"):
                return 404, {"error": {"message": f"no control endpoint {method} {path}"}}
            data = json.loads(raw) if raw.strip() else {}
            if not isinstance(data, dict):
                raise TypeError("the body must be a JSON object")
            model = data.get("model")
            if model is not None and not isinstance(model, str):
                raise ValueError("'model' must be a string or null")
            if action == "push":
                replies = data.get("replies")
                if not isinstance(replies, list):
                    raise ValueError("'replies' must be a list of reply objects")
                built = [Reply.from_dict(r) for r in replies]
                self.push(*built, model=model)
                return 200, {"queued": len(built)}
            if action == "responder":
                name = data.get("name")
                self.set_responder(None if name is None else get_responder(str(name)), model=model)
                return 200, {"ok": True}
            self.clear()
            return 200, {"ok": True}
        except (ValueError, TypeError) as exc:
            return 400, {"error": {"message": str(exc)}}

    def _models(self, anthropic: bool) -> dict[str, Any]:
        with self._lock:
            names = [r.model for r in self.requests if r.model]
            names += [m for m in (*self._queues, *self._responders) if m]
        ids = list(dict.fromkeys([*names, "scripted"]))
        if anthropic:
            data = [{"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
                    for m in ids]
            return {"data": data, "has_more": False, "first_id": ids[0], "last_id": ids[-1]}
        return {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "scripted"}
                                           for m in ids]}
