"""The local model's child process: llama.cpp's own HTTP server on 127.0.0.1, in-process via xllamacpp.

    python -m agentls.agent.local.serve --model PATH [--port 0] [--ctx-size 8192] [--threads N] [--draft ngram|none]

Prints exactly one JSON line on stdout once the server answers ``/health``:
``{"url": "http://127.0.0.1:PORT/v1", "model": ..., "pid": ..., "load_seconds": ...}``; on failure,
``{"error": "..."}`` and exit status 1. Everything else (llama.cpp's log included) goes to stderr,
which the parent points at a log file: fd 1 is re-pointed to fd 2 before llama.cpp loads, so no
native ``printf`` can slip into the JSON line's channel.

With ``--keep-alive SECONDS --registry FILE --lease FILE`` it detaches instead (agent/local/keeper.py): it
registers itself and lives until nobody has held its lease for that long, or until SIGTERM.

Otherwise the process lives until its stdin reaches EOF (the parent closed it, or died: no orphan survives the
agent), or until SIGTERM/SIGINT/SIGHUP. The lifeline is watched from the first instant, by a thread,
so a parent that dies while the model is still loading (seconds, for 2 GB) ends this process at once
rather than after the load, when nothing is left to serve. It runs in its own process so that a crash or OOM in llama.cpp
never takes the agent or the editor server down.

This process serves and does nothing else: its main thread only blocks on stdin, so blocking calls
are fine here (the agent's own I/O, in ``runtime.py``, is async).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import signal
import sys
import threading
import time
from typing import Any, TextIO


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m agentls.agent.local.serve", description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="path of the GGUF file")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--ctx-size", type=int, default=8192)
    p.add_argument("--threads", type=int, default=0, help="0: all available cores")
    p.add_argument("--parallel", type=int, default=1, help="request slots (the agent needs one)")
    p.add_argument("--alias", default=None, help="the model name /v1/models reports")
    p.add_argument("--health-timeout", type=float, default=30.0)
    p.add_argument("--slot-save-path", default=None, help="directory for /slots/0?action=save|restore")
    p.add_argument("--draft", choices=("ngram", "none"), default="none",
                   help="ngram: speculative decoding drafted from the context itself (see _params); off by default")
    p.add_argument("--keep-alive", type=float, default=0.0,
                   help="seconds: outlive the parent, detached, until nobody has used it for this long (needs "
                        "--registry and --lease; agent/local/keeper.py)")
    p.add_argument("--registry", default=None, help="with --keep-alive: where to say where this server is")
    p.add_argument("--lease", default=None, help="with --keep-alive: the lease its users hold")
    p.add_argument("--ident", default="", help="with --keep-alive: the model id the registry names")
    return p.parse_args(argv)


def _available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 2


def _params(args: argparse.Namespace) -> Any:
    import xllamacpp  # heavy: imported only in this process

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.ctx_size
    params.n_parallel = args.parallel
    params.port = args.port
    params.hostnames = [args.host]
    threads = args.threads or _available_cores()
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_gpu_layers = 0  # CPU wheel; a GPU wheel may be installed by hand and would still work
    params.warmup = True
    params.use_jinja = True  # the model's own chat template, with tool descriptions
    params.cache_prompt = True  # the system prompt and earlier turns are re-used between agent steps
    params.endpoint_slots = True  # lets tests observe that a closed stream stops generating
    params.endpoint_metrics = True
    # Only the agent talks to this server: no web UI, and no CORS for web pages other than localhost
    # ones (llama.cpp reflects any Origin by default, which would let any site use the model).
    params.ui = False
    params.cors_origins = "localhost"
    params.cors_credentials = False
    if args.alias:
        params.model_alias = args.alias
    if args.draft == "ngram":
        # Prompt-lookup speculation, no draft model: when the last 12 tokens also occur earlier in the context,
        # the tokens that followed them there are proposed and checked in one batch. A file rewritten whole, or
        # a file quoted, is mostly a copy of what was read: 3 times the decode rate on 2 cores for a plain-text copy.
        # But a JSON-mode answer quoting a file (escaped newlines) has its drafts rejected and decodes 30% slower,
        # and llama.cpp cannot switch it per request: off until the agent's own turns are measured (bench/README.md).
        params.speculative.types = [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]
    if args.slot_save_path:  # a new run restores the processed system prompt (agent/local/slots.py)
        os.makedirs(args.slot_save_path, exist_ok=True)
        params.slot_save_path = os.path.join(args.slot_save_path, "")  # llama.cpp appends the file name as is
    return params


def _wait_healthy(host: str, port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        conn = http.client.HTTPConnection(host, port, timeout=2)
        try:
            conn.request("GET", "/health")
            resp = conn.getresponse()
            body = resp.read().decode("utf-8", "replace")
            if resp.status == 200:
                return
            last = f"HTTP {resp.status}: {body[:200]}"
        except OSError as exc:
            last = str(exc)
        finally:
            conn.close()
        time.sleep(0.05)
    raise RuntimeError(f"llama.cpp server did not become healthy within {timeout:.0f}s ({last})")


def _announce(channel: TextIO, payload: dict[str, Any]) -> None:
    channel.write(json.dumps(payload) + "\n")
    channel.flush()


def _lifeline() -> None:
    """Read stdin until EOF (the parent closed it or died), then end the process on the spot."""
    try:
        while sys.stdin.buffer.read(65536):
            pass
    except (OSError, ValueError):
        pass
    sys.stderr.flush()
    os._exit(0)  # llama.cpp's threads hold no state worth a slow, and sometimes hanging, teardown


def _detach() -> None:
    """Leave the parent: fork, and the parent side exits at once (the caller reads the announcement from the
    pipe this process keeps); a session of its own, so no terminal's hang-up reaches it."""
    if os.fork() > 0:
        os._exit(0)
    os.setsid()


def _watch_lease(registry: str, lease: str, keep_alive: float) -> None:
    """A kept server's life: it ends once nobody has held its lease for ``keep_alive`` seconds."""
    from pathlib import Path

    from . import keeper

    while True:
        time.sleep(keeper.POLL_SECONDS)
        if keeper.idle_long_enough(Path(lease), keep_alive):
            try:
                with open(registry, "rb") as f:
                    mine = json.loads(f.read(65536)).get("pid") == os.getpid()
            except (OSError, ValueError, AttributeError):
                mine = False
            if mine:
                with contextlib.suppress(OSError):
                    os.unlink(registry)
            print("agent.local.serve: idle, exiting", file=sys.stderr, flush=True)
            os._exit(0)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    kept = args.keep_alive > 0 and bool(args.registry) and bool(args.lease)
    if kept:
        _detach()
    else:
        threading.Thread(target=_lifeline, name="lifeline", daemon=True).start()
    # Keep the real stdout for the one JSON line; point fd 1 at stderr for everything else.
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for sig in (signal.SIGTERM,) if kept else (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: os._exit(0))
    if kept:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    started = time.monotonic()
    try:
        if not os.path.isfile(args.model):
            raise FileNotFoundError(f"model file not found: {args.model}")
        import xllamacpp

        server = xllamacpp.Server(_params(args))
        address = str(server.listening_address).rstrip("/")
        host_port = address.split("://", 1)[-1]
        host, _, port = host_port.rpartition(":")
        _wait_healthy(host, int(port), args.health_timeout)
    except BaseException as exc:
        print(f"agent.local.serve: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        _announce(channel, {"error": f"{type(exc).__name__}: {exc}"})
        return 1
    payload = {"url": f"{address}/v1", "model": args.model, "pid": os.getpid(),
               "load_seconds": round(time.monotonic() - started, 3)}
    if kept:
        from pathlib import Path

        from . import keeper

        keeper.write_registry(Path(args.registry), {**payload, "model_id": args.ident})
        threading.Thread(target=_watch_lease, args=(args.registry, args.lease, args.keep_alive), name="lease",
                         daemon=True).start()
    try:
        _announce(channel, payload)
        if kept:
            channel.close()  # the parent may be gone by the next write; there is none
    except OSError:  # nobody reads the announcement any more: the parent is gone
        if not kept:
            os._exit(0)
    print(f"agent.local.serve: serving {args.model} at {address}", file=sys.stderr, flush=True)
    try:
        threading.Event().wait()  # the lifeline thread (or a signal) ends the process
    except KeyboardInterrupt:
        pass
    sys.stderr.flush()
    os._exit(0)
    return 0  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
