"""``agentls lsp``: the LSP face on stdio (see docs/protocol.md).

Imports here stay minimal: ``initialize`` is answered before pygls and the core are loaded.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys


def _parser() -> argparse.ArgumentParser:
    from ..runtime.logs import add_log_options

    p = argparse.ArgumentParser(prog="agentls lsp", description="The agentls language server on stdio.")
    add_log_options(p)
    p.add_argument("--max-message-bytes", type=int, default=None,
                   help="largest JSON-RPC message accepted (default 32 MiB); larger ones get -32600")
    p.add_argument("--stdio", action="store_true", help="accepted for editors that pass it; stdio is the default")
    return p


def _expected_errors(record: logging.LogRecord) -> bool:
    """pygls logs each error answer (-32602 for bad params...) with a traceback, and a client message it
    could not read with the traceback in the text; the server answers or logs those itself: one line at
    INFO."""
    exc = record.exc_info[1] if record.exc_info else None
    if exc is not None and type(exc).__module__ == "pygls.exceptions":
        record.msg, record.args = f"{record.getMessage()}: {exc}", ()
    elif isinstance(record.msg, str) and record.msg.startswith("Unable to deserialize message"):
        record.msg, record.args = "pygls could not structure a message (answered or logged by agentls)", ()
    else:
        return True
    record.exc_info, record.exc_text = None, None
    record.levelno, record.levelname = logging.INFO, "INFO"
    return logging.getLogger().isEnabledFor(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    from ..runtime.logs import setup_logging

    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    setup_logging(args.log_file, args.log_level)
    if args.log_level != "DEBUG":  # pygls logs every message at INFO and protocol noise at WARNING
        logging.getLogger("pygls").setLevel(logging.ERROR)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_expected_errors)
    from .boot import serve
    from .wire import DEFAULT_MAX_MESSAGE_BYTES

    try:
        return asyncio.run(serve(args.max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES))
    except KeyboardInterrupt:
        return 130
