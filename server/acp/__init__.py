"""The ACP face: ``agentls acp`` serves Agent Client Protocol v1 on stdio (newline-delimited JSON).

Start-up is tuned for the time to answer ``initialize``: the answer depends on nothing but the client's
capabilities, so it is written before the ACP SDK (whose pydantic schema costs ~0.4 s to import) and the
core are loaded. Every later message goes through the official SDK (``server.acp.agent``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentls acp", description="Serve the Agent Client Protocol on stdio.")
    p.add_argument("--log-file", default=os.environ.get("AGENTLS_LOG_FILE"),
                   help="write logs here instead of stderr (env AGENTLS_LOG_FILE)")
    p.add_argument("--log-level", default=os.environ.get("AGENTLS_LOG_LEVEL", "WARNING"),
                   help="DEBUG, INFO, WARNING (default) or ERROR (env AGENTLS_LOG_LEVEL)")
    return p


def _configure_logging(path: str | None, level: str) -> None:
    handler: logging.Handler = logging.FileHandler(path, encoding="utf-8") if path else \
        logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    from agentls.agent.redact import protect_handler

    protect_handler(handler)  # keys and tokens never reach the log
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.WARNING))
    logging.captureWarnings(True)  # warnings become log records: stderr or the log file, never stdout


async def serve(in_fd: int, out_fd: int) -> int:
    from agentls.server.acp.caps import ClientState, initialize_result, is_initialize_request
    from agentls.server.acp.stdio import LineTransport, open_streams

    state = ClientState()
    try:
        reader, writer = await open_streams(in_fd, out_fd)
    except ValueError as exc:  # stdin/stdout is a regular file, not a pipe, socket or terminal
        print(f"agentls acp: {exc}; run it from an editor, which talks to it through pipes", file=sys.stderr)
        return 2
    transport = LineTransport(reader, writer, observe=state.observe)
    first = await transport.receive()
    if first is None:
        return 0
    if is_initialize_request(first):
        await transport.send({"jsonrpc": "2.0", "id": first["id"], "result": initialize_result()})
        state.initialized = True
    else:
        transport.unread(first)
    from agentls.server.acp.agent import run  # the SDK and the core load only now

    await run(transport, state)
    return 0


def main(argv: list[str]) -> int:
    ns = _parser().parse_args(argv)
    from agentls.server.acp.stdio import claim_stdio

    in_fd, out_fd = claim_stdio()
    _configure_logging(ns.log_file, ns.log_level)
    try:
        return asyncio.run(serve(in_fd, out_fd))
    except KeyboardInterrupt:
        return 130
