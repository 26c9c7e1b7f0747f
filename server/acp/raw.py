"""Methods of ACP v1 that the SDK does not route, added to its router: ``session/delete`` and
``$/cancel_request`` (docs/acp.md "Sessions", "Cancellation").

Every request handler is wrapped so that ``$/cancel_request {requestId}`` can stop it: a ``session/prompt``
is cancelled like ``session/cancel`` (it answers ``cancelled``), any other request is stopped and answers
``-32800``. The transport records each request's id in ``REQUEST_ID`` as it hands the request over, and the
SDK's task for the request inherits it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, cast

from acp import RequestError
from acp.router import MessageRouter, Route

from .capabilities import REQUEST_ID, id_key

log = logging.getLogger("agentls.acp")

REQUEST_CANCELLED = -32800

Handler = Callable[[Any], Awaitable[Any]]


class InFlight:
    """The requests being handled, by id."""

    def __init__(self, cancel_prompt: Callable[[str], None]) -> None:
        self._running: dict[str, tuple[str, Any, asyncio.Task[Any]]] = {}
        self._cancelled: set[str] = set()
        self._cancel_prompt = cancel_prompt

    def wrap(self, method: str, func: Handler) -> Handler:
        async def handle(params: Any) -> Any:
            # In the SDK's own task for the request: its answer is still written before anything the handler
            # scheduled runs (the ACP handlers rely on that order).
            key = REQUEST_ID.get()
            task = asyncio.current_task()
            if key is not None and task is not None:
                self._running[key] = (method, params, task)
            try:
                return await func(params)
            except asyncio.CancelledError:
                if key is not None and key in self._cancelled and task is not None:
                    task.uncancel()
                    raise RequestError(REQUEST_CANCELLED, f"{method} was cancelled ($/cancel_request)") from None
                raise
            finally:
                if key is not None:
                    self._running.pop(key, None)
                    self._cancelled.discard(key)
        return handle

    async def cancel(self, params: Any) -> None:
        """``$/cancel_request``: an unknown or finished id is ignored (it may have been answered already)."""
        request_id = params.get("requestId") if isinstance(params, dict) else None
        key = id_key(request_id)
        running = self._running.get(key)
        if running is None:
            log.info("$/cancel_request for %r: no such request is running", request_id)
            return
        method, request, task = running
        session_id = request.get("sessionId") if isinstance(request, dict) else None
        if method == "session/prompt" and isinstance(session_id, str):
            self._cancel_prompt(session_id)  # the prompt answers stopReason "cancelled"
            return
        self._cancelled.add(key)
        task.cancel()


def install(conn: Any, inflight: InFlight, delete: Handler) -> None:
    """Add the routes to the SDK connection's router (``AgentSideConnection._conn._handler``)."""
    router = cast(MessageRouter, conn._conn._handler)
    router.add_route(Route(method="session/delete", func=delete, kind="request"))
    for route in list(router._requests.values()):
        if route.func is not None:
            route.func = inflight.wrap(route.method, route.func)
    ext = router._request_extensions
    if ext is not None:
        async def extension(name: str, payload: Any) -> Any:
            return await inflight.wrap(f"_{name}", lambda p: ext(name, p))(payload)
        router._request_extensions = extension
    router.add_route(Route(method="$/cancel_request", func=inflight.cancel, kind="notification"))
