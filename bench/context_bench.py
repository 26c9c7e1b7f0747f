"""Context and session benchmarks. Prints figures; asserts nothing.

    python bench/context_bench.py [--runs N]

1. compress a synthetic ~200k-token transcript (the summary call is an instant stub, so its
   latency is excluded), against ``json.dumps`` of the same transcript;
2. resume a 10,000-message session (``load_messages`` + ``repair``), against a raw ``sqlite3``
   SELECT of the same rows;
3. ``append_messages`` of one round (assistant with a tool call + its result), against a raw
   ``sqlite3`` insert + commit of the same rows in WAL / synchronous=NORMAL.
Each figure is the median of several runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiosqlite

from agentls.agent.context.compress import Compressor
from agentls.agent.context.tokens import estimate_messages
from agentls.agent.sessions import SessionStore
from agentls.agent.transcript import repair
from agentls.agent.types import Message


def transcript(exchanges: int, rounds: int, result_chars: int) -> list[Message]:
    out: list[Message] = []
    n = 0
    for e in range(exchanges):
        out.append({"role": "user", "content": f"request {e}: change module m{e} so that it handles edge cases"})
        for _ in range(rounds):
            n += 1
            cid = f"call_{n}"
            out.append({"role": "assistant", "content": f"Looking at part {n}.", "tool_calls": [
                {"id": cid, "type": "function",
                 "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{e}/f{n}.py"})}}]})
            out.append({"role": "tool", "tool_call_id": cid, "name": "read_file",
                        "content": f"# file {n}\n" + "def f(x):\n    return x + 1\n" * (result_chars // 30)})
        out.append({"role": "assistant", "content": f"Done with request {e}."})
    return out


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def timed(fn: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return median_ms(samples)


async def atimed(fn: Callable[[], Awaitable[Any]], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - start)
    return median_ms(samples)


def report(label: str, ours: float, baseline_label: str, baseline: float) -> None:
    ratio = ours / baseline if baseline > 0 else float("inf")
    print(f"{label:<44} {ours:9.3f} ms   {baseline_label:<34} {baseline:9.3f} ms   ratio {ratio:6.2f}x")


async def bench_compress(runs: int) -> None:
    messages = transcript(44, 12, 1600)
    tokens = estimate_messages(messages)

    async def instant(prompt: str) -> str:
        return "## Goal\nbenchmark"

    async def once() -> None:
        await Compressor(128_000).compress(messages, summarize=instant)

    ours = await atimed(once, runs)
    base = timed(lambda: json.dumps(messages), runs)
    print(f"compress: {len(messages)} messages, ~{tokens} estimated tokens, 128k window")
    report("compress (summary call excluded)", ours, "json.dumps(transcript)", base)


async def bench_resume(runs: int, tmp: Path) -> None:
    db = tmp / "resume.db"
    messages = transcript(300, 16, 400)[:10_000]
    while messages[-1]["role"] == "tool" or messages[-1].get("tool_calls"):
        messages.pop()
    async with SessionStore(db) as store:
        await store.create_session(session_id="big", cwd="/w", model="m", system_prompt="p")
        for i in range(0, len(messages), 500):
            await store.append_messages("big", messages[i:i + 500], turn=i // 500 + 1)

        async def once() -> None:
            repair(await store.load_messages("big"))

        async def load_only() -> None:
            await store.load_messages("big")

        ours = await atimed(once, runs)
        loading = await atimed(load_only, runs)

    def raw() -> None:
        with sqlite3.connect(db) as conn:
            conn.execute("SELECT * FROM messages WHERE session_id = 'big' AND archived = 0 ORDER BY seq").fetchall()

    base = timed(raw, runs)
    print(f"resume: {len(messages)} messages")
    report("resume: load_messages + repair", ours, "raw sqlite3 SELECT of the rows", base)
    report("  of which load_messages alone", loading, "raw sqlite3 SELECT of the rows", base)


async def bench_append(runs: int, tmp: Path) -> None:
    round_: list[Message] = transcript(1, 1, 1200)[1:3]
    rounds = max(200, runs * 50)
    async with SessionStore(tmp / "append.db") as store:
        await store.create_session(session_id="s", cwd="/w", model="m", system_prompt="p")
        for _ in range(20):  # warm up
            await store.append_messages("s", round_, turn=0)
        samples = []
        for i in range(rounds):
            start = time.perf_counter()
            await store.append_messages("s", round_, turn=i)
            samples.append(time.perf_counter() - start)
    ours = median_ms(samples)
    conn = sqlite3.connect(tmp / "raw.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE m (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, "
                 "tool_calls TEXT)")
    rows = [("s", m["role"], json.dumps(m.get("content")), json.dumps(m.get("tool_calls"))) for m in round_]
    raw_samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO m (session_id, role, content, tool_calls) VALUES (?, ?, ?, ?)", rows)
        conn.execute("COMMIT")
        raw_samples.append(time.perf_counter() - start)
    conn.close()
    async with aiosqlite.connect(tmp / "raw_async.db", isolation_level=None) as aconn:
        await aconn.execute("PRAGMA journal_mode=WAL")
        await aconn.execute("PRAGMA synchronous=NORMAL")
        await aconn.execute("CREATE TABLE m (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, "
                            "tool_calls TEXT)")
        async_samples = []
        for _ in range(rounds):
            start = time.perf_counter()
            await aconn.execute("BEGIN IMMEDIATE")
            await aconn.executemany("INSERT INTO m (session_id, role, content, tool_calls) VALUES (?, ?, ?, ?)",
                                    rows)
            await aconn.execute("COMMIT")
            async_samples.append(time.perf_counter() - start)
    print(f"append: {len(round_)} messages per round, {rounds} rounds")
    report("append_messages (one round)", ours, "raw sqlite3 insert + commit", median_ms(raw_samples))
    report("append_messages (one round)", ours, "raw aiosqlite insert + commit", median_ms(async_samples))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        await bench_compress(args.runs)
        await bench_resume(args.runs, Path(tmp))
        await bench_append(args.runs, Path(tmp))


if __name__ == "__main__":
    asyncio.run(main())
