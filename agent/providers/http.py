"""Shared HTTP plumbing for providers: one keep-alive client per agent, error mapping."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from .base import ProviderResponse
from ..redact import redact
from .errors import ProviderError, classify_status, parse_retry_after


def make_client(timeout: float, *, tls: bool = True) -> httpx.AsyncClient:
    """A keep-alive client. Connect is bounded tightly; a read waits up to ``timeout`` between bytes.

    ``tls=False`` (every endpoint is plain http, e.g. a local server) skips loading the CA bundle."""
    import ssl

    from .factory import shared_ssl_context

    return httpx.AsyncClient(
        verify=shared_ssl_context() if tls else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT),
        timeout=httpx.Timeout(timeout, connect=min(timeout, 15.0)),
        limits=httpx.Limits(max_connections=32, max_keepalive_connections=16, keepalive_expiry=60.0),
        follow_redirects=True,
    )


def error_message(body: bytes) -> tuple[str, str | None]:
    """The human message and the vendor error type from an error body, whatever its shape."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        return (text[:500] or "no error body"), None
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict):
        msg = err.get("message") or json.dumps(err)[:500]
        kind = err.get("type") or err.get("code")
        return str(msg), (str(kind) if kind else None)
    if isinstance(err, str):
        return err, None
    if isinstance(data, dict) and isinstance(data.get("message"), str):  # {"type": "error", "code", "message"}
        kind = data.get("code") or (data.get("type") if data.get("type") != "error" else None)
        return data["message"], (str(kind) if kind else None)
    return text[:500], None


_ANTHROPIC_TYPES = {
    "overloaded_error": "overloaded", "rate_limit_error": "rate_limit", "authentication_error": "auth",
    "permission_error": "auth", "not_found_error": "model_not_found", "request_too_large": "payload_too_large",
    "billing_error": "billing", "api_error": "server_error", "timeout_error": "timeout",
}
# Error codes inside a 200 stream (OpenAI Responses ``error`` / ``response.failed`` events), where no status says.
_STREAM_CODES = {
    **_ANTHROPIC_TYPES, "insufficient_quota": "billing", "rate_limit_exceeded": "rate_limit",
    "context_length_exceeded": "context_overflow", "server_error": "server_error", "invalid_api_key": "auth",
    "model_not_found": "model_not_found", "invalid_prompt": "content_policy", "vector_store_timeout": "timeout",
}


def status_error(status: int, body: bytes, headers: httpx.Headers, model: str,
                 secrets: tuple[str, ...] = ()) -> ProviderError:
    message, kind = error_message(body)
    message = redact(message, secrets)  # some providers echo the key back in their errors
    category = classify_status(status, message)
    if kind in _ANTHROPIC_TYPES and category not in ("context_overflow", "billing"):
        category = _ANTHROPIC_TYPES[kind]
    retry_after = parse_retry_after(headers.get("retry-after"))
    return ProviderError(category, message, status=status, retry_after=retry_after, model=model)


async def post(client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str], *, model: str,
               purpose: str, stream: bool, secrets: tuple[str, ...] = (),
               read_stream: Callable[[httpx.Response], Awaitable[ProviderResponse]],
               read_whole: Callable[[Any], ProviderResponse], shape: str) -> ProviderResponse:
    """POST a request. A streamed answer goes to ``read_stream``; a whole one's JSON to ``read_whole`` (a
    response of another ``shape`` is a ``format_error``). Every failure is a classified ``ProviderError``."""
    resp = await _send(client, url, body, headers, model=model, purpose=purpose, stream=stream, secrets=secrets,
                       read_stream=read_stream)
    if isinstance(resp, ProviderResponse):
        return resp
    try:
        return read_whole(resp.json())
    except ProviderError:
        raise
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ProviderError("format_error", f"the model server sent a response that is not {shape}: "
                            f"{resp.text[:200]!r}", model=model) from exc
    except Exception as exc:
        raise unreadable(exc, model) from exc


async def _send(client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str], *, model: str,
                purpose: str, stream: bool, secrets: tuple[str, ...],
                read_stream: Callable[[httpx.Response], Awaitable[ProviderResponse]]
                ) -> ProviderResponse | httpx.Response:
    if purpose:
        headers = {**headers, "x-agentls-purpose": purpose}
    try:
        if stream:
            async with client.stream("POST", url, content=body, headers=headers) as resp:
                if resp.status_code >= 400:
                    raise status_error(resp.status_code, await resp.aread(), resp.headers, model, secrets)
                try:
                    return await read_stream(resp)
                except (ProviderError, httpx.HTTPError):
                    raise
                except Exception as exc:  # a stream no parser foresaw still ends as a classified failure
                    raise unreadable(exc, model) from exc
        resp = await client.post(url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        raise transport_error(exc, model) from exc
    if resp.status_code >= 400:
        raise status_error(resp.status_code, resp.content, resp.headers, model, secrets)
    return resp


def unreadable(exc: BaseException, model: str) -> ProviderError:
    """A response the provider could not read (a shape no parser foresaw), as a retryable format error."""
    detail = redact(str(exc))[:200]
    return ProviderError("format_error", f"could not read the model server's response: {type(exc).__name__}: "
                         f"{detail}", model=model)


def transport_error(exc: Exception, model: str) -> ProviderError:
    if isinstance(exc, httpx.TimeoutException):
        return ProviderError("timeout", f"the model server did not answer in time ({type(exc).__name__})",
                             model=model)
    detail = redact(str(exc))  # a URL with credentials in it must not reach the log
    if isinstance(exc, httpx.ConnectError):
        return ProviderError("server_error", f"could not connect to the model server: {detail}", model=model)
    return ProviderError("server_error", f"the connection to the model server broke: {type(exc).__name__}: {detail}",
                         model=model)


def stream_error(event_data: str, model: str) -> ProviderError:
    """An error event sent inside a 200 stream."""
    message, kind = error_message(event_data.encode())
    message = redact(message)
    category = _STREAM_CODES.get(kind or "", None) or classify_status(500, message)
    return ProviderError(category, message, model=model)
