"""fetch_url: a web page as Markdown, asked for per domain, public addresses only, bounded in size and time."""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from .base import JsonObject, Tool, ToolContext, ToolFailure, ToolOutput
from ..web.fetch import FetchError, FetchLimits, Page, fetch

DEFAULT_LENGTH = 20_000
MAX_LENGTH = 100_000
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"application/json", "application/xml", "application/javascript", "application/x-javascript",
                        "application/ld+json", "application/rss+xml", "application/atom+xml", "application/toml",
                        "application/yaml", "application/x-yaml", "application/x-sh", "application/sql",
                        "image/svg+xml"})


def is_text(content_type: str) -> bool:
    """Whether a body of this media type is worth downloading as text (an unknown type is sniffed)."""
    return (not content_type or content_type.startswith("text/") or content_type in TEXT_TYPES
            or content_type.endswith(("+json", "+xml")))


async def network_refusal(ctx: ToolContext) -> str | None:
    """Why this session may not use the network, or None: the command sandbox is in force with its network
    off (``sandbox_network = "off"``), so fetch_url is refused as ``curl`` in a command would be. Where no
    sandbox confines commands (``sandbox = "off"``, or ``auto`` with no mechanism here, or one that cannot
    block the network), commands reach the network anyway, and so does fetch_url."""
    sandbox = ctx.sandbox
    if sandbox is None or sandbox.config.network or sandbox.config.mode == "off":
        return None
    if sandbox.config.mode != "strict" and not (await sandbox.status()).get("networkConfined"):
        return None
    return ("error: the network is off for this session (the command sandbox is on with sandbox_network = "
            "\"off\"), so fetch_url cannot read web pages. The user can allow it with sandbox_network = \"on\".")


def _decode(page: Page) -> str:
    for encoding in (page.charset, "utf-8"):
        if not encoding:
            continue
        try:
            return page.body.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            continue
    return page.body.decode("utf-8", "replace")


def _markdown(html: str) -> tuple[str | None, str]:
    from ..web.markdown import html_to_markdown

    return html_to_markdown(html)


def _header(page: Page, title: str | None) -> str:
    lines = [f"URL: {page.url}"]
    if page.redirects:
        lines.append(f"Redirected from: {page.redirects[0]}" + (f" ({len(page.redirects)} redirects)"
                                                                 if len(page.redirects) > 1 else ""))
    lines.append(f"Status: {page.status} {page.reason}".rstrip())
    if page.content_type:
        lines.append(f"Content-Type: {page.content_type}")
    if title:
        lines.append(f"Title: {title}")
    return "\n".join(lines)


@dataclass(frozen=True)
class _Window:
    start: int
    length: int


def _window(args: JsonObject) -> _Window:
    start = args.get("start_index", 0)
    length = args.get("max_length", DEFAULT_LENGTH)
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        raise ToolFailure("'start_index' must be a non-negative integer")
    if not isinstance(length, int) or isinstance(length, bool) or length < 1:
        raise ToolFailure("'max_length' must be a positive integer")
    return _Window(start, min(length, MAX_LENGTH))


def make_fetch_tool(limits: FetchLimits | None = None) -> Tool:
    """The fetch_url tool with these limits (``allow_networks`` lets it reach those private networks)."""
    chosen = limits or FetchLimits()

    async def run(ctx: ToolContext, args: JsonObject) -> ToolOutput:
        url = args.get("url")
        if not isinstance(url, str) or not url.strip():
            raise ToolFailure("a non-empty 'url' is required")
        url = url.strip()
        window = _window(args)
        refusal = await network_refusal(ctx)
        if refusal:
            return ToolOutput(refusal, is_error=True)

        async def check_host(host: str) -> str | None:
            host = host.lower()
            return await ctx.ask_permission(f"Fetch from {host}", "fetch", {"url": url, "host": host},
                                            f"fetch:{host}", False, [])

        from ..providers.factory import shared_ssl_context

        try:
            page = await fetch(url, chosen, verify=shared_ssl_context(), check_host=check_host, accept_body=is_text)
        except FetchError as exc:
            message = str(exc)
            return ToolOutput(message if message.startswith("error:") else f"error: {message}", is_error=True)
        return await _render(page, window, bool(args.get("raw")), chosen)

    return Tool(
        name="fetch_url",
        description="Fetch a web page (http or https) and read it as Markdown; plain text and JSON come as they "
                    "are. Long pages come in windows of max_length characters: call again with start_index to "
                    "read on. Binary files (images, PDFs, archives) are not shown. Public addresses only.",
        parameters={"type": "object", "properties": {
            "url": {"type": "string", "description": "The absolute http(s) URL"},
            "start_index": {"type": "integer", "minimum": 0,
                            "description": "The first character to show (default 0)"},
            "max_length": {"type": "integer", "minimum": 1, "maximum": MAX_LENGTH,
                           "description": f"How many characters to show (default {DEFAULT_LENGTH})"},
            "raw": {"type": "boolean", "description": "The HTML source instead of Markdown"}},
            "required": ["url"], "additionalProperties": False},
        kind="fetch", run=run, timeout=None, plan_safe=True,
        title=lambda args: f"Fetch {args.get('url', '')}".strip(),
        short="Fetch a web page as Markdown.", small_arguments=("url",), guide="",
    )


async def _render(page: Page, window: _Window, raw: bool, limits: FetchLimits) -> ToolOutput:
    size = f"{len(page.body):,} bytes" + (" or more" if page.truncated else "")
    if not is_text(page.content_type) or b"\x00" in page.body[:8192]:
        what = page.content_type or "unknown type"
        return ToolOutput(f"{_header(page, None)}\n\nerror: this is binary content ({what}, {size}); fetch_url shows "
                          "text only", is_error=True)
    text = _decode(page)
    title = None
    if page.content_type in HTML_TYPES and not raw:
        # A parse of a few megabytes is CPU work for about a second: off the event loop, so other sessions'
        # streams and requests go on meanwhile.
        title, text = await anyio.to_thread.run_sync(_markdown, text)
    header = _header(page, title)
    notes = []
    if page.truncated:
        notes.append(f"[the page is larger than {limits.max_bytes:,} bytes; only that much was read]")
    shown = text[window.start: window.start + window.length]
    end = window.start + len(shown)
    if window.start and window.start >= len(text):
        shown = ""
        notes.append(f"[start_index {window.start} is past the end: the text has {len(text):,} characters]")
    elif end < len(text):
        notes.append(f"[showing characters {window.start:,}-{end:,} of {len(text):,}; call fetch_url again with "
                     f"start_index={end} to read on]")
    elif window.start:
        notes.append(f"[showing characters {window.start:,}-{end:,}, the end of the text]")
    body = shown if shown.strip() else ("(no text)" if not window.start else "")
    failed = page.status >= 400
    if failed:
        header = f"error: the server answered {page.status} {page.reason}".rstrip() + "\n" + header
    out = "\n\n".join(x for x in (header, body, "\n".join(notes)) if x)
    return ToolOutput(out, is_error=failed, raw_output={"url": page.url, "status": page.status,
                                                         "contentType": page.content_type})


FETCH_URL = make_fetch_tool()
