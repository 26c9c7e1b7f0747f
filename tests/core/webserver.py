"""A small real HTTP/1.1 server on asyncio streams for the fetch_url tests: each route is a coroutine
writing a raw response, so a test can send what real servers send (redirect chains, huge bodies,
binaries, stalls, gzip bombs) and see what the client asked for and how far it read."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

Route = Callable[["Exchange"], Awaitable[None]]


@dataclass
class Exchange:
    method: str
    path: str
    headers: dict[str, str]
    writer: asyncio.StreamWriter
    sent: int = 0

    async def respond(self, status: int, body: bytes = b"", *, reason: str = "OK",
                      headers: dict[str, str] | None = None) -> None:
        lines = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        self.sent += len(body)

    async def stream(self, status: int, chunks: int, chunk: bytes, *, headers: dict[str, str]) -> None:
        """A body of ``chunks`` × ``chunk`` sent piece by piece; stops when the client goes away."""
        lines = [f"HTTP/1.1 {status} OK", f"Content-Length: {chunks * len(chunk)}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        for _ in range(chunks):
            self.writer.write(chunk)
            await self.writer.drain()
            self.sent += len(chunk)


@dataclass
class WebServer:
    host: str = "127.0.0.1"
    routes: dict[str, Route] = field(default_factory=dict)
    seen: list[Exchange] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"

    async def start(self) -> WebServer:
        self._server = await asyncio.start_server(self._serve, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):  # handlers still running (a stalled route)
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            method, path, _ = request_line.split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, v in
                       (line.split(":", 1) for line in header_lines if ":" in line)}
            exchange = Exchange(method, path, headers, writer)
            self.seen.append(exchange)
            route = self.routes.get(path.split("?", 1)[0])
            if route is None:
                await exchange.respond(404, b"<html><body><h1>Not here</h1></body></html>", reason="Not Found",
                                       headers={"Content-Type": "text/html"})
            else:
                await route(exchange)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            if task is not None:
                self._tasks.discard(task)


def html(body: str, title: str = "A page") -> bytes:
    return (f"<!doctype html><html><head><title>{title}</title><style>p {{color: red}}</style>"
            f"<script>window.secret = 'never shown';</script></head><body>{body}</body></html>").encode()


def redirect(to: str, status: int = 302) -> Route:
    async def route(ex: Exchange) -> None:
        await ex.respond(status, b"", reason="Found", headers={"Location": to})
    return route


def page(body: bytes, content_type: str = "text/html; charset=utf-8") -> Route:
    async def route(ex: Exchange) -> None:
        await ex.respond(200, body, headers={"Content-Type": content_type})
    return route


def gzip_bomb(size: int) -> Route:
    packed = gzip.compress(b"a" * size)

    async def route(ex: Exchange) -> None:
        await ex.respond(200, packed, headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"})
    return route
