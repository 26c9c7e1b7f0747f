"""Aider in one session for bench/exercism.py, run by the Python of Aider's own venv (never the project's).

    AIDER_VENV/bin/python bench/exercism_aider.py --folder DIR --solution acronym.py --edit-format whole \
        --read INSTRUCTIONS.md --read acronym_test.py --model openai/local

Aider's own benchmark drives ``Coder.run`` the same way. Each line on stdin is one JSON message
(``{"message": "..."}``) for the same ``Coder``, so a second try keeps the first one's chat; after each,
one JSON line goes to the real stdout (``{"seconds": ...}``). Aider's own output goes to stderr. The
OpenAI-compatible server comes from ``OPENAI_API_BASE``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--folder", required=True)
    p.add_argument("--solution", required=True)
    p.add_argument("--read", action="append", default=[])
    p.add_argument("--edit-format", default="whole")
    p.add_argument("--model", default="openai/local")
    args = p.parse_args()
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # everything aider prints goes to stderr
    sys.stdout = sys.stderr
    os.chdir(args.folder)
    from aider.coders import Coder  # type: ignore[import-not-found]
    from aider.io import InputOutput  # type: ignore[import-not-found]
    from aider.models import Model  # type: ignore[import-not-found]

    io = InputOutput(yes=True, pretty=False, fancy_input=False, chat_history_file=None, input_history_file=None)
    model = Model(args.model)
    coder = Coder.create(main_model=model, edit_format=args.edit_format, io=io, fnames=[args.solution],
                         read_only_fnames=args.read, auto_commits=False, dirty_commits=False, use_git=False,
                         stream=False, suggest_shell_commands=False, detect_urls=False, map_tokens=0,
                         auto_lint=False, auto_test=False)
    for line in sys.stdin:
        message = json.loads(line)["message"]
        started = time.monotonic()
        error = None
        try:
            coder.run(with_message=message)
        except Exception as exc:  # a crash of aider is the try's result, not the bench's
            error = f"{type(exc).__name__}: {exc}"
        reply.write(json.dumps({"seconds": time.monotonic() - started, "error": error}) + "\n")
        reply.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
