"""``python -m agentls.agent.scripted``: run the scripted provider until SIGINT/SIGTERM.

Prints one JSON line ``{"url", "openai_url", "anthropic_url"}`` on stdout, logs to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from dataclasses import replace
from typing import Any

from .replies import RecordedRequest, Reply, Responder
from .responders import RESPONDERS
from .server import ScriptedServer


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m agentls.agent.scripted",
                                description="Run the scripted OpenAI/Anthropic-compatible test provider.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    p.add_argument("--script", metavar="FILE.json", help="a JSON list of reply objects to queue")
    p.add_argument("--responder", choices=sorted(RESPONDERS), help="answer with a built-in responder "
                                                                   "once the script is used up")
    p.add_argument("--latency", type=float, default=0.0, metavar="S",
                   help="seconds before each response (for replies that set no latency)")
    p.add_argument("--lenient", action="store_true", help="turn off strict request validation")
    return p


def load_script(path: str, latency: float = 0.0) -> list[Reply]:
    with open(path, encoding="utf-8") as fh:
        data: Any = json.load(fh)
    if not isinstance(data, list):
        raise TypeError(f"{path}: a script is a JSON list of reply objects")
    return [Reply.from_dict({"latency": latency, **item} if isinstance(item, dict) else item) for item in data]


def _with_latency(fn: Responder, latency: float) -> Responder:
    async def wrapped(req: RecordedRequest) -> Reply:
        result = fn(req)
        reply = result if isinstance(result, Reply) else await result
        return reply if reply.latency else replace(reply, latency=latency)
    return wrapped


async def _serve(args: argparse.Namespace) -> None:
    srv = ScriptedServer(args.host, args.port, strict=not args.lenient)
    if args.script:
        srv.push(*load_script(args.script, args.latency))
    if args.responder:
        fn = RESPONDERS[args.responder]
        srv.set_responder(_with_latency(fn, args.latency) if args.latency else fn)
    await srv.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    sys.stdout.write(json.dumps({"url": srv.base_url, "openai_url": srv.openai_url,
                                 "anthropic_url": srv.anthropic_url}) + "\n")
    sys.stdout.flush()
    logging.getLogger("agentls.agent.scripted").info("scripted provider on %s (strict=%s)", srv.base_url, srv.strict)
    try:
        await stop.wait()
    finally:
        await srv.stop()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s scripted %(levelname)s %(message)s")
    try:
        asyncio.run(_serve(args))
    except (OSError, ValueError, TypeError) as exc:
        print(f"scripted provider: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
