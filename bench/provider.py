"""The scripted provider as the benchmarks run it: in its own process, answering by model name.

``python -m bench.provider [--strict] [--record FILE]`` prints one JSON line (``url``, ``openai_url``)
and serves until SIGTERM/SIGINT.

Models:
- ``bench:N``       N rounds of ``read_file bench.txt``, then "done" (the built-in ``bench`` responder);
- ``slow:N:MS``     the same, each answer after MS milliseconds of model latency;
- ``par:K``         one round of K parallel ``read_file f<i>.txt`` calls, then "done";
- ``deleg:K:N:MS``   one ``delegate_task`` call with K tasks ``Bench child <i>``, then "done"; each child makes N
  rounds of ``read_file bench.txt``, then answers, every answer after MS milliseconds;
- ``stream:N:MS[:START]``  a text answer of N words ``w<START> w<START+1> ...`` (5 digits), one SSE frame
  per word, MS ms apart.

With ``--record FILE`` the time (``time.monotonic()``, which is system-wide on Linux) at which each
``w<i>`` word frame was written to the socket is saved to FILE as JSON on shutdown, for the streaming
latency benchmark.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import signal
import sys
import time
from pathlib import Path

from agentls.agent.scripted import ScriptedServer, http11
from agentls.agent.scripted.replies import RecordedRequest, Reply, call, text, tools
from agentls.agent.scripted.responders import bench, count_tool_results

CHILD = "Bench child"
WORD = re.compile(rb'"content":\s*"(w\d{5})')
_sent: dict[str, float] = {}


def _rounds(req: RecordedRequest, n: int, latency: float) -> Reply:
    done = count_tool_results(req)
    if done < n:  # a different limit each round (the same text): the loop guard stops identical calls
        return tools(call("read_file", {"path": "bench.txt", "limit": 2000 + done}), latency=latency)
    return text("done", latency=latency)


def _delegation(req: RecordedRequest, k: int, n: int, latency: float) -> Reply:
    first = next((m for m in req.messages if m.get("role") == "user"), {})
    if str(first.get("content") or "").startswith(CHILD):  # a child: N rounds, then its answer
        return _rounds(req, n, latency)
    if count_tool_results(req) == 0:
        return tools(call("delegate_task", {"tasks": [{"goal": f"{CHILD} {i}"} for i in range(k)]}), latency=latency)
    return text("done", latency=latency)


def route(req: RecordedRequest) -> Reply:
    kind, _, rest = req.model.partition(":")
    args = rest.split(":")
    if kind == "slow":
        return _rounds(req, int(args[0]), int(args[1]) / 1000.0)
    if kind == "deleg":
        return _delegation(req, int(args[0]), int(args[1]), int(args[2]) / 1000.0)
    if kind == "par":
        k = int(args[0])
        if count_tool_results(req) < k:
            return tools(*(call("read_file", {"path": f"f{i}.txt"}) for i in range(k)))
        return text("done")
    if kind == "stream":
        n, delay = int(args[0]), int(args[1]) / 1000.0
        start = int(args[2]) if len(args) > 2 else 0
        if req.last_user_text and "title" in req.last_user_text.lower()[:40]:
            return text("Streaming benchmark")
        return text(" ".join(f"w{i:05d}" for i in range(start, start + n)), chunk_delay=delay)
    return bench(req)


def _record_sends() -> None:
    original = http11.Conn.send

    async def send(self: http11.Conn, *parts: bytes) -> None:
        self.writer.write(b"".join(parts))
        stamp = time.monotonic()
        for part in parts:
            for m in WORD.finditer(part):
                _sent.setdefault(m.group(1).decode(), stamp)
        await self.writer.drain()

    send.__wrapped__ = original  # type: ignore[attr-defined]
    http11.Conn.send = send  # type: ignore[method-assign]


async def _serve(strict: bool) -> None:
    srv = ScriptedServer(strict=strict)
    srv.set_responder(route)
    await srv.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    sys.stdout.write(json.dumps({"url": srv.base_url, "openai_url": srv.openai_url}) + "\n")
    sys.stdout.flush()
    try:
        await stop.wait()
    finally:
        await srv.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.provider")
    p.add_argument("--strict", action="store_true", help="validate requests as the real APIs do")
    p.add_argument("--record", metavar="FILE", help="save the write time of each w<i> word frame")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.record:
        _record_sends()
    try:
        asyncio.run(_serve(args.strict))
    finally:
        if args.record:
            Path(args.record).write_text(json.dumps(_sent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
