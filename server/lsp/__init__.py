"""``agentls lsp``: the LSP face on stdio (see docs/protocol.md).

Imports here stay minimal: ``initialize`` is answered before pygls and the core are loaded.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentls lsp", description="The agentls language server on stdio.")
    p.add_argument("--log-file", help="write the log here instead of stderr")
    p.add_argument("--log-level", default=os.environ.get("AGENTLS_LOG_LEVEL", "WARNING"),
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"], type=str.upper)
    p.add_argument("--max-message-bytes", type=int, default=None,
                   help="largest JSON-RPC message accepted (default 32 MiB); larger ones get -32600")
    p.add_argument("--stdio", action="store_true", help="accepted for editors that pass it; stdio is the default")
    return p


def _expected_errors(record: logging.LogRecord) -> bool:
    """pygls logs each error answer (-32602 for bad params...) with a traceback; keep one line at INFO."""
    exc = record.exc_info[1] if record.exc_info else None
    if exc is None or type(exc).__module__ != "pygls.exceptions":
        return True
    record.msg, record.args = f"{record.getMessage()}: {exc}", ()
    record.exc_info, record.exc_text = None, None
    record.levelno, record.levelname = logging.INFO, "INFO"
    return logging.getLogger().isEnabledFor(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    handler: logging.Handler = logging.FileHandler(args.log_file, encoding="utf-8") if args.log_file \
        else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    from agentls.agent.redact import protect_handler

    protect_handler(handler)  # keys and tokens never reach the log
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(args.log_level)
    if args.log_level != "DEBUG":  # pygls logs every message at INFO and protocol noise at WARNING
        logging.getLogger("pygls").setLevel(logging.ERROR)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_expected_errors)
    from agentls.server.lsp.boot import serve
    from agentls.server.lsp.wire import DEFAULT_MAX_MESSAGE_BYTES

    try:
        return asyncio.run(serve(args.max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES))
    except KeyboardInterrupt:
        return 130
