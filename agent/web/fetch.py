"""One bounded GET: every hop's address checked, redirects followed by hand within a limit, the body read
up to a size limit, the whole fetch within a time limit."""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urljoin

import anyio
import httpx

from ..version import __version__
from .address import AddressRefused, parse_networks, resolve

REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class FetchLimits:
    timeout: float = 30.0  # seconds for the whole fetch, redirects included
    connect_timeout: float = 10.0
    max_bytes: int = 5_000_000  # of the body read; the rest is not downloaded
    max_redirects: int = 5
    # Networks reachable besides public addresses (CIDR: "10.0.0.0/8", "127.0.0.1"); loopback, private and
    # link-local addresses are refused unless listed here.
    allow_networks: tuple[str, ...] = ()


class FetchError(Exception):
    """The fetch failed; the message is for the model."""


@dataclass
class Page:
    url: str  # the final URL, after redirects
    status: int
    reason: str
    content_type: str  # the media type, lower case, without parameters ("" when the server sent none)
    charset: str | None
    body: bytes
    truncated: bool  # the body was longer than max_bytes
    redirects: list[str] = field(default_factory=list)  # the URLs that redirected, in order


# Asked before each new host is contacted: None to go ahead, else the refusal for the model.
HostCheck = Callable[[str], Awaitable[str | None]]


def _check_url(url: str) -> httpx.URL:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:
        raise FetchError(f"{url!r} is not a valid URL ({exc})") from None
    if parsed.scheme not in ("http", "https"):
        raise FetchError(f"only http and https URLs can be fetched, not {parsed.scheme or 'a URL without a scheme'}"
                         f" ({url!r})")
    if not parsed.host:
        raise FetchError(f"{url!r} has no host")
    if parsed.userinfo:
        raise FetchError("URLs with a user name or password are not fetched (they would send the credentials)")
    return parsed


def _pinned(url: httpx.URL, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> httpx.URL:
    """``url`` aimed at ``address`` (already checked) instead of its host name."""
    host = str(address)
    return url.copy_with(host=host)


def _host_header(url: httpx.URL) -> str:
    host = url.host if ":" not in url.host else f"[{url.host}]"
    default = 443 if url.scheme == "https" else 80
    return host if url.port in (None, default) else f"{host}:{url.port}"


async def fetch(url: str, limits: FetchLimits, *, verify: ssl.SSLContext | bool = True, check_host: HostCheck | None = None,
                accept_body: Callable[[str], bool] = lambda content_type: True) -> Page:
    """GET ``url``. ``accept_body(content_type)`` False: the body is not downloaded (a binary file).
    Raises FetchError (with what to tell the model) on any failure, the time limit included."""
    current = _check_url(url)
    try:
        allowed = parse_networks(limits.allow_networks)
    except ValueError as exc:
        raise FetchError(f"the setting fetchAllowNetworks is wrong: {exc}") from None
    redirects: list[str] = []
    asked: set[str] = set()
    timeout = httpx.Timeout(limits.timeout, connect=min(limits.connect_timeout, limits.timeout))
    try:
        with anyio.fail_after(limits.timeout):
            async with httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=timeout,
                                         verify=verify,
                                         headers={"User-Agent": f"agentls/{__version__} (fetch_url)",
                                                  "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,"
                                                            "application/json;q=0.9,*/*;q=0.5",
                                                  # read raw and decompressed here, within the size limit
                                                  "Accept-Encoding": "gzip, deflate"}) as client:
                while True:
                    host = current.host
                    if check_host is not None and host not in asked:
                        asked.add(host)
                        refusal = await check_host(host)
                        if refusal:
                            raise FetchError(refusal)
                    port = current.port or (443 if current.scheme == "https" else 80)
                    try:
                        target = await resolve(host, port, allowed=allowed)
                    except AddressRefused as exc:
                        where = f" (reached by a redirect from {redirects[-1]})" if redirects else ""
                        raise FetchError(f"refused: {exc}{where}") from None
                    extensions = {"sni_hostname": host} if current.scheme == "https" else {}
                    request = client.build_request("GET", _pinned(current, target.address),
                                                   headers={"Host": _host_header(current)}, extensions=extensions)
                    response = await client.send(request, stream=True)
                    try:
                        location = response.headers.get("location")
                        if response.status_code in REDIRECTS and location:
                            redirects.append(str(current))
                            if len(redirects) > limits.max_redirects:
                                raise FetchError(f"too many redirects (more than {limits.max_redirects}); the chain: "
                                                 + " -> ".join(redirects))
                            current = _check_url(urljoin(str(current), location))
                            continue
                        return await _read(response, current, redirects, limits, accept_body)
                    finally:
                        await response.aclose()
    except TimeoutError:
        raise FetchError(f"the fetch took longer than {limits.timeout:g} s and was stopped") from None
    except httpx.TimeoutException as exc:
        raise FetchError(f"the server did not answer in time ({type(exc).__name__})") from None
    except httpx.HTTPError as exc:
        raise FetchError(f"the request failed: {type(exc).__name__}: {exc}") from None


async def _read(response: httpx.Response, url: httpx.URL, redirects: list[str], limits: FetchLimits,
                accept_body: Callable[[str], bool]) -> Page:
    raw_type = response.headers.get("content-type", "")
    media = raw_type.split(";", 1)[0].strip().lower()
    charset = response.charset_encoding
    chunks: list[bytes] = []
    size = 0
    truncated = False
    if accept_body(media):
        async for chunk in response.aiter_raw():
            room = limits.max_bytes - size
            if len(chunk) > room:
                chunks.append(chunk[:room])
                truncated = True
                break
            chunks.append(chunk)
            size += len(chunk)
    body = b"".join(chunks)
    encoding = response.headers.get("content-encoding", "").lower().strip()
    if body and encoding and encoding != "identity":
        body = _decode(body, encoding, limits.max_bytes)
        truncated = truncated or len(body) >= limits.max_bytes
    return Page(url=str(url), status=response.status_code, reason=response.reason_phrase,
                content_type=media, charset=charset, body=body, truncated=truncated, redirects=redirects)


def _decode(body: bytes, encoding: str, limit: int) -> bytes:
    """A compressed body, decompressed up to ``limit`` bytes (a small gzip must not expand into gigabytes)."""
    import zlib

    if encoding in ("gzip", "x-gzip", "deflate"):
        wbits = 16 + zlib.MAX_WBITS if "gzip" in encoding else zlib.MAX_WBITS
        try:
            return zlib.decompressobj(wbits).decompress(body, limit)
        except zlib.error:
            try:
                return zlib.decompressobj(-zlib.MAX_WBITS).decompress(body, limit)
            except zlib.error as exc:
                raise FetchError(f"the server sent a body that does not decompress ({encoding}: {exc})") from None
    raise FetchError(f"the server sent a body in an encoding agentls does not read ({encoding})")
