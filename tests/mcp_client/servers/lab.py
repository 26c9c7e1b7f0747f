"""A real MCP server on the SDK's server side (``MCPServer``), with the faults the tests need.

``python lab.py MODE [STATE_DIR]``:
- ``ok``: tools (echo, a read-only one, one that errs, an image, structured output, a slow one, one that
  crashes the server mid-call, one that adds a tool and sends ``tools/list_changed``), a prompt, resources;
- ``hang``: never answers ``initialize`` (reads stdin, says so on stderr);
- ``flood``: writes thousands of lines that are not JSON-RPC to stdout before it serves, and floods stderr
  on every call;
- ``exit``: prints a reason to stderr and exits 7 at once.
STATE_DIR receives marker files (``started-<pid>``, ``cancelled``) the tests read.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
STATE = Path(sys.argv[2]) if len(sys.argv) > 2 else None
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def mark(name: str, text: str = "") -> None:
    if STATE is not None:
        STATE.mkdir(parents=True, exist_ok=True)
        (STATE / name).write_text(text)


mark(f"started-{os.getpid()}", str(os.getpid()))

if MODE == "hang":
    print("lab: I will never answer initialize", file=sys.stderr, flush=True)
    while sys.stdin.buffer.read(1):
        pass
    time.sleep(3600)
    sys.exit(0)
if MODE == "exit":
    print("lab: missing LAB_TOKEN, giving up", file=sys.stderr, flush=True)
    sys.exit(7)
if MODE == "flood":
    garbage = b"".join(b"debug: not json line %d\n" % i for i in range(20_000))
    os.write(1, garbage)

from mcp.server.mcpserver import MCPServer, Context
from mcp_types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("lab")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def peek(key: str = "x") -> str:
    """A read-only look-up."""
    return f"peeked {key}"


@server.tool()
def fail(reason: str = "bad input") -> str:
    """Always fails."""
    raise ValueError(f"refused: {reason}")


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """A tiny image."""
    return [TextContent(type="text", text="here is a pixel"), ImageContent(type="image", data=PNG, mime_type="image/png")]


@server.tool(structured_output=True)
def weather(city: str) -> dict[str, object]:
    """Structured weather."""
    return {"city": city, "temperature": 21}


@server.tool()
async def slow(seconds: float = 30.0) -> str:
    """Sleeps (for cancellation and timeouts)."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        mark("cancelled", "yes")
        raise
    return "slept"


@server.tool()
def crash() -> str:
    """Crashes the whole server in the middle of the call."""
    print("lab: segfault imminent (simulated)", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def noisy() -> str:
    """Floods stderr, then answers."""
    sys.stderr.write("noise " * 200_000 + "\nlab: last words of the flood\n")
    sys.stderr.flush()
    return "quiet now"


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds a tool named `extra` and tells the client its tool list changed."""
    def extra() -> str:
        return "extra tool ran"

    server.add_tool(extra, name="extra", description="A tool added at run time.")
    await ctx.notify_tools_changed()
    return "grown"


@server.prompt()
def review(topic: str, depth: str = "short") -> str:
    """Ask for a review of a topic."""
    return f"Please review {topic} ({depth})."


@server.resource("lab://notes/today", mime_type="text/plain")
def notes() -> str:
    """Today's notes."""
    return "buy milk"


if __name__ == "__main__":
    if MODE == "http":
        server.settings.port = int(os.environ.get("PORT", "0"))
        server.run("streamable-http")
    else:
        server.run()
