"""JSON-RPC errors whose message says, in words a user can act on, what was wrong."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from acp import RequestError

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002


def invalid_params(message: str) -> RequestError:
    return RequestError(INVALID_PARAMS, message)


def auth_required(message: str, details: str | None = None) -> RequestError:
    return RequestError(AUTH_REQUIRED, message, {"details": details} if details else None)


def not_found(message: str) -> RequestError:
    return RequestError(RESOURCE_NOT_FOUND, message)


def internal(message: str, data: Any = None) -> RequestError:
    return RequestError(INTERNAL_ERROR, message, data)


@contextmanager
def store_errors() -> Iterator[None]:
    """The session store's own errors (a damaged or read-only file, a directory in its place, a session another
    process is driving) answered in words naming the file, never as a bare internal error."""
    from agentls.agent.sessions.lease import SessionBusy
    from agentls.agent.sessions.schema import StoreError
    from ..runtime.busy import busy_data

    try:
        yield
    except SessionBusy as exc:
        raise internal(str(exc), busy_data(exc)) from None
    except StoreError as exc:
        raise internal(str(exc), {"reason": "sessionStore"}) from None
