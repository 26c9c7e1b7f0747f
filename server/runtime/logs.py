"""Logging for every ``agentls`` command: one handler (stderr, or the file of ``--log-file`` /
``AGENTLS_LOG_FILE``), secrets redacted, Python warnings captured. Stdout is never a log target: it
carries the protocol."""

from __future__ import annotations

import argparse
import logging
import os
import sys

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
TERSE = "agentls: %(message)s"


def add_log_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log-file", default=os.environ.get("AGENTLS_LOG_FILE") or None,
                        help="write the log here instead of stderr (env AGENTLS_LOG_FILE)")
    parser.add_argument("--log-level", default=os.environ.get("AGENTLS_LOG_LEVEL") or "WARNING", type=str.upper,
                        choices=LEVELS, help="DEBUG, INFO, WARNING (default) or ERROR (env AGENTLS_LOG_LEVEL)")


def setup_logging(log_file: str | None, level: str, *, terse: bool = False) -> logging.Handler:
    """Replace the root logger's handlers with one; returns it (a face may add filters)."""
    from agentls.agent.redact import protect_handler

    handler: logging.Handler = logging.FileHandler(log_file, encoding="utf-8") if log_file \
        else logging.StreamHandler(sys.stderr)
    if log_file:
        handler.setFormatter(logging.Formatter(TERSE if terse else FORMAT))
    else:  # a terminal may be reading: control characters in a message are shown, not obeyed
        from ..visible import VisibleFormatter

        handler.setFormatter(VisibleFormatter(TERSE if terse else FORMAT))
    protect_handler(handler)  # keys and tokens never reach the log
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.WARNING))
    logging.captureWarnings(True)  # warnings become log records: stderr or the log file, never stdout
    return handler
