"""A small MCP server speaking the stdio protocol by hand, so it can misbehave in ways the SDK's server
never would. ``python mcp_hostile_server.py STATE_DIR [--stubborn] [--setsid-child]``:

- tools: ``ping`` (answers at once), ``big`` (a result of ``size`` bytes on one line, its ``id`` first,
  last, or hidden in the middle), ``shout`` (a ``size``-byte notification without an id, then ``pong``),
  ``split`` (a normal answer written a byte at a time, then several answers in one write);
- ``--stubborn``: ignores SIGTERM, SIGINT, SIGHUP and the end of its input;
- ``--setsid-child``: starts ``sleep`` in a session of its own, the way a server starts a helper daemon.

STATE_DIR receives ``server.pid`` and ``child.pid``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

STATE = Path(sys.argv[1])
STUBBORN = "--stubborn" in sys.argv
STATE.mkdir(parents=True, exist_ok=True)
(STATE / "server.pid").write_text(str(os.getpid()))
if STUBBORN:
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
if "--setsid-child" in sys.argv:
    child = subprocess.Popen(["sleep", "600"], start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (STATE / "child.pid").write_text(str(child.pid))

out = sys.stdout.buffer
TOOLS = [{"name": name, "description": name, "inputSchema": {"type": "object", "properties": {
    "size": {"type": "integer"}, "where": {"type": "string"}}}} for name in ("ping", "big", "shout", "split")]


def send(data: bytes) -> None:
    out.write(data)
    out.flush()


def answer(ident: object, result: object) -> None:
    send(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode() + b"\n")


def text(words: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": words}], "isError": False}


def big(ident: object, size: int, where: str) -> None:
    body = b'{"content":[{"type":"text","text":"' + b"x" * size + b'"}],"isError":false}'
    key = b'"id":' + json.dumps(ident).encode()
    if where == "last":
        send(b'{"jsonrpc":"2.0","result":' + body + b"," + key + b"}\n")
    elif where == "middle":
        send(b'{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"' + b"x" * size + b'"}],'
             + key + b',"isError":false}}\n')
    else:
        send(b'{"jsonrpc":"2.0",' + key + b',"result":' + body + b"}\n")


def call(ident: object, name: str, args: dict[str, object]) -> None:
    size = int(args.get("size", 0))  # type: ignore[call-overload]
    if name == "ping":
        answer(ident, text("pong"))
    elif name == "big":
        big(ident, size, str(args.get("where", "first")))
    elif name == "shout":
        send(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'
             + b"y" * size + b'"}}\n')
        answer(ident, text("pong after the shout"))
    elif name == "split":
        line = json.dumps({"jsonrpc": "2.0", "id": ident, "result": text("split " * 3)}).encode() + b"\n"
        for i in range(len(line)):
            send(line[i:i + 1])


for raw in sys.stdin.buffer:
    try:
        message = json.loads(raw)
    except ValueError:
        continue
    if "id" not in message:
        continue
    method, ident = message.get("method"), message["id"]
    if method == "initialize":
        answer(ident, {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                       "serverInfo": {"name": "hostile", "version": "1"}})
    elif method == "tools/list":
        answer(ident, {"tools": TOOLS})
    elif method == "tools/call":
        call(ident, message["params"]["name"], message["params"].get("arguments") or {})
    else:
        send(json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no"}}).encode() + b"\n")
while STUBBORN:
    time.sleep(1)
