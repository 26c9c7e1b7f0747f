"""Where a loop iteration's time goes: wall time per phase, per iteration, for agentls.

    python -m bench.loop_phases [--rounds 50] [--repeats 5] [--no-stream]

A diagnostic, not a benchmark: it wraps the loop's phase functions (by name; a name that no longer
exists is skipped and listed) with wall-clock timers, runs a few turns against the scripted provider,
and prints the mean milliseconds each phase costs per iteration. Indented rows are inside the row above.
The raw httpx loop of ``bench/loop_overhead.py`` runs too, for the same turn, as the reference.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import importlib
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from bench.common import bench_file_text, median, provider
from bench.loop_overhead import Case, agentls_turn, raw_turn, wire_setup

# (label, module, attribute path, kind); kind: "async", "sync" or "agen" (time spent inside an async generator)
PHASES: list[tuple[str, str, str, str]] = [
    ("Conversation.persist (every call)", "agentls.agent.conversation", "Conversation.persist", "async"),
    ("  store.append_messages", "agentls.agent.sessions.store", "SessionStore.append_messages", "async"),
    ("Compactor.due", "agentls.agent.compactor", "Compactor.due", "sync"),
    ("call_model", "agentls.agent.loop.rounds", "call_model", "async"),
    ("  request.prompt", "agentls.agent.loop.request", "prompt", "sync"),
    ("  provider.complete", "agentls.agent.providers.openai", "OpenAIProvider.complete", "async"),
    ("    _body (encode the request)", "agentls.agent.providers.openai", "OpenAIProvider._body", "sync"),
    ("    json_events (read the stream after the headers)", "agentls.agent.providers.openai", "json_events", "agen"),
    ("prepare_calls", "agentls.agent.loop.rounds", "prepare_calls", "sync"),
    ("announce (tool_call updates)", "agentls.agent.loop.rounds", "announce", "async"),
    ("run_calls", "agentls.agent.loop.rounds", "run_calls", "async"),
    ("  ToolRunner.run", "agentls.agent.tool_runner", "ToolRunner.run", "async"),
    ("    host.read_text", "agentls.agent.disk_host", "DiskHost.read_text", "async"),
    ("  hints_for", "agentls.agent.context.hints", "HintTracker.hints_for", "async"),
    ("UpdateSender.send (all updates)", "agentls.agent.updates", "UpdateSender.send", "async"),
]

totals: collections.defaultdict[str, float] = collections.defaultdict(float)
counts: collections.Counter[str] = collections.Counter()


def _wrap(label: str, fn: Any, kind: str) -> Any:
    if kind == "sync":
        @functools.wraps(fn)
        def sync(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                totals[label] += time.perf_counter() - t
                counts[label] += 1
        return sync
    if kind == "agen":
        async def agen(*a: Any, **k: Any) -> AsyncIterator[Any]:
            gen = fn(*a, **k)
            while True:
                t = time.perf_counter()
                try:
                    item = await gen.__anext__()
                except StopAsyncIteration:
                    totals[label] += time.perf_counter() - t
                    return
                totals[label] += time.perf_counter() - t
                yield item
        return agen

    @functools.wraps(fn)
    async def coro(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return await fn(*a, **k)
        finally:
            totals[label] += time.perf_counter() - t
            counts[label] += 1
    return coro


def install() -> list[str]:
    """Wrap every phase that exists; return the labels that could not be found."""
    missing = []
    for label, module_name, path, kind in PHASES:
        try:
            owner: Any = importlib.import_module(module_name)
            *parents, attr = path.split(".")
            for part in parents:
                owner = getattr(owner, part)
            fn = getattr(owner, attr)
        except (ImportError, AttributeError):
            missing.append(f"{label.strip()} ({module_name}.{path})")
            continue
        setattr(owner, attr, _wrap(label, fn, kind))
    return missing


async def main_async(rounds: int, repeats: int, stream: bool) -> None:
    missing = install()
    case = Case(rounds, stream, True)
    with provider() as prov, tempfile.TemporaryDirectory(prefix="agentls-phases-") as tmp:
        ws = Path(tmp)
        (ws / "bench.txt").write_text(bench_file_text())
        system, schemas = await wire_setup(prov.openai_url, ws)
        await agentls_turn(prov.openai_url, ws, Case(5, stream, True), ws / "s.db")
        totals.clear()
        counts.clear()
        ours, raw = [], []
        async with httpx.AsyncClient(timeout=60) as client:
            for i in range(repeats):
                ours.append((await agentls_turn(prov.openai_url, ws, case, ws / "s.db")).wall)
                raw.append((await raw_turn(client, prov.openai_url, ws, case, system, schemas, None, f"r{i}")).wall)
    iters = repeats * (rounds + 1)

    def line(name: str, v: float, extra: str) -> None:
        print(f"{name:50s} {v:8.3f}  {extra}")

    print(f"N={rounds}, stream {'on' if stream else 'off'}, persistence on; {repeats} turns; ms per iteration")
    line("agentls turn (median)", median(ours) * 1000, "")
    line("raw httpx loop turn (median, persistence off)", median(raw) * 1000, "")
    for label, *_ in PHASES:
        if label in totals:
            per = counts[label] / iters if counts[label] else 0
            line(label, totals[label] / iters * 1000, f"({per:.2f} calls/iteration)" if per else "")
    if missing:
        print("not found (renamed?): " + "; ".join(missing), file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.loop_phases")
    p.add_argument("--rounds", type=int, default=50)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--no-stream", action="store_true")
    args = p.parse_args(argv)
    asyncio.run(main_async(args.rounds, args.repeats, not args.no_stream))
    return 0


if __name__ == "__main__":
    sys.exit(main())
