"""The ACP face: ``agentls acp`` serves Agent Client Protocol v1 on stdio (newline-delimited JSON).

Start-up is tuned for the time to answer ``initialize``: the answer depends on nothing but the client's
capabilities, so it is written before the ACP SDK (whose pydantic schema costs ~0.4 s to import) and the
core are loaded. Every later message goes through the official SDK (``server.acp.agent``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

log = logging.getLogger("agentls.acp")


def _parser() -> argparse.ArgumentParser:
    from ..runtime.logs import add_log_options

    p = argparse.ArgumentParser(prog="agentls acp", description="Serve the Agent Client Protocol on stdio.")
    add_log_options(p)
    p.add_argument("--max-message-bytes", type=int, default=None,
                   help="the largest line (one JSON-RPC message) accepted, in bytes (default 32 MiB); a longer "
                        "one is skipped and answered with an error")
    return p


async def serve(in_fd: int, out_fd: int, max_line_bytes: int | None = None) -> int:
    from .capabilities import ClientState, initialize_result, is_initialize_request
    from .stdio import DEFAULT_MAX_LINE_BYTES, LineTransport, open_streams

    state = ClientState()
    try:
        reader, writer = await open_streams(in_fd, out_fd)
    except ValueError as exc:  # stdin/stdout is a regular file, not a pipe, socket or terminal
        print(f"agentls acp: {exc}; run it from an editor, which talks to it through pipes", file=sys.stderr)
        return 2
    transport = LineTransport(reader, writer, observe=state.observe,
                              max_line_bytes=max_line_bytes or DEFAULT_MAX_LINE_BYTES)
    first = await transport.receive()
    if first is None:
        return 0
    if is_initialize_request(first):
        await transport.send({"jsonrpc": "2.0", "id": first["id"], "result": initialize_result()})
        state.initialized = True
        log.debug("initialize answered; loading the ACP SDK and the core")
    else:
        transport.unread(first)
    from .agent import run  # the SDK and the core load only now

    await run(transport, state)
    return 0


def main(argv: list[str]) -> int:
    ns = _parser().parse_args(argv)
    from .stdio import claim_stdio

    from ..runtime.logs import setup_logging

    in_fd, out_fd = claim_stdio()
    setup_logging(ns.log_file, ns.log_level)
    try:
        return asyncio.run(serve(in_fd, out_fd, ns.max_message_bytes))
    except KeyboardInterrupt:
        return 130
