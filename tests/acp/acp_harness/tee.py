"""A tee between an ACP client and the agent process: records every raw line both ways.

    python tee.py FRAMES.jsonl [--caps JSON] -- agent-command args...

Each line crossing the pipe is appended to FRAMES.jsonl as ``{"dir": "in"|"out", "raw": line}``
("out" is what the agent sent). ``--caps`` deep-merges JSON into the ``clientCapabilities`` of the
client's ``initialize`` (for capabilities the Python SDK's models cannot express, such as the
session-compaction RFD's ``session.compaction``). Stderr passes straight through.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import IO, Any


def merge(base: Any, extra: Any) -> Any:
    if isinstance(base, dict) and isinstance(extra, dict):
        out = dict(base)
        for key, value in extra.items():
            out[key] = merge(base.get(key), value)
        return out
    return extra


def patch_initialize(line: bytes, caps: dict[str, Any] | None) -> bytes:
    if caps is None:
        return line
    try:
        msg = json.loads(line)
    except ValueError:
        return line
    if not isinstance(msg, dict) or msg.get("method") != "initialize" or not isinstance(msg.get("params"), dict):
        return line
    params = msg["params"]
    params["clientCapabilities"] = merge(params.get("clientCapabilities") or {}, caps)
    return json.dumps(msg).encode() + b"\n"


def record(log: IO[str], direction: str, line: bytes) -> None:
    log.write(json.dumps({"dir": direction, "raw": line.decode("utf-8", "replace")}) + "\n")
    log.flush()


async def pump_in(reader: asyncio.StreamReader, child: asyncio.subprocess.Process, log: IO[str],
                  caps: dict[str, Any] | None) -> None:
    assert child.stdin is not None
    while line := await reader.readline():
        line = patch_initialize(line, caps)
        record(log, "in", line)
        child.stdin.write(line)
        await child.stdin.drain()
    child.stdin.close()


async def pump_out(child: asyncio.subprocess.Process, log: IO[str]) -> None:
    assert child.stdout is not None
    out = sys.stdout.buffer
    while line := await child.stdout.readline():
        record(log, "out", line)
        out.write(line)
        out.flush()


async def main(argv: list[str]) -> int:
    sep = argv.index("--")
    frames, opts, command = argv[0], argv[1:sep], argv[sep + 1:]
    caps = json.loads(opts[opts.index("--caps") + 1]) if "--caps" in opts else None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    child = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE,
                                                 stdout=asyncio.subprocess.PIPE, limit=1 << 26)
    with open(frames, "a", encoding="utf-8") as log:  # noqa: ASYNC230 (a test helper process)
        feeder = asyncio.ensure_future(pump_in(reader, child, log, caps))
        await pump_out(child, log)
        feeder.cancel()
        return await child.wait()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
