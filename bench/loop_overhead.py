"""1. Loop overhead: ms per iteration of a ``read_file`` turn, agentls against the raw httpx limit.

A turn of N rounds is N+1 provider calls (N ``read_file`` rounds, then "done"). Per iteration = the
turn's wall time / (N+1). The **raw limit** is a minimal agent written inline below: one keep-alive
httpx client; each round it posts the whole growing transcript (the same system prompt, the same tool
schemas, the same messages byte for byte) as JSON, parses the tool call (streamed or not), reads and
numbers the file itself, appends, and — with persistence on — commits the round to SQLite (WAL,
synchronous=NORMAL) before the next call, as agentls does.

Both run in this process on one event loop, against the same scripted provider in another process.
Runs alternate (agentls, raw, raw, agentls, ...) and each figure is the median over the repeats.

``python -m bench.loop_overhead [--quick] [--profile N]``: ``--profile`` runs one agentls turn of N
rounds under pyinstrument and prints the profile instead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.common import Row, bench_file_text, cli, median, provider

TARGET_RATIO = 1.3
PROMPT = "Read bench.txt, then read it again, until you are told to stop."


@dataclass(frozen=True)
class Case:
    rounds: int
    stream: bool
    persist: bool

    @property
    def model(self) -> str:
        return f"bench:{self.rounds}"

    @property
    def label(self) -> str:
        return (f"loop overhead, N={self.rounds}, stream {'on' if self.stream else 'off'}, "
                f"persistence {'on' if self.persist else 'off'} (ms/iteration)")


# ---------------------------------------------------------------- agentls

@dataclass(frozen=True)
class Sample:
    """Per iteration of one turn: wall seconds, and CPU seconds of this whole process (all its threads)."""

    wall: float
    cpu: float


async def agentls_turn(url: str, ws: Path, case: Case, db: Path | None) -> Sample:
    """One agentls turn in a fresh session; setup (client, store, tool snapshot) is outside the timing."""
    from agentls.agent.agent import AIAgent

    agent = AIAgent(model=f"bench:{case.rounds}", base_url=url, api_key="bench", workspace=ws,
                    session_db=db if case.persist else None, stream=case.stream,
                    max_iterations=case.rounds + 5, titles="prompt", approval="yolo")
    async with agent:
        c0, t0 = time.process_time(), time.perf_counter()
        result = await agent.run_conversation(PROMPT)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    if not result.completed or result.api_calls != case.rounds + 1:
        raise RuntimeError(f"agentls turn did not run as scripted: {result.exit_reason}, "
                           f"{result.api_calls} calls, error={result.error}")
    return Sample(elapsed / (case.rounds + 1), cpu / (case.rounds + 1))


async def wire_setup(url: str, ws: Path) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt and tool schemas agentls sends, so the raw loop sends the same bytes."""
    from agentls.agent.agent import AIAgent

    agent = AIAgent(model="bench:1", base_url=url, api_key="bench", workspace=ws, titles="prompt")
    async with agent:
        await agent.run_conversation(PROMPT)
        return agent.system_prompt or "", list(agent.registry.schemas())


# ---------------------------------------------------------------- the raw limit

def number_lines(text: str) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(text.splitlines(), start=1))


class RawStore:
    """What a minimal agent persists: each round's messages in one committed transaction."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("CREATE TABLE IF NOT EXISTS messages (session TEXT, seq INTEGER, role TEXT, body TEXT)")

    def append(self, session: str, start: int, messages: list[dict[str, Any]]) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany("INSERT INTO messages VALUES (?,?,?,?)",
                              [(session, start + i, m["role"], json.dumps(m)) for i, m in enumerate(messages)])
        self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()


async def raw_call(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """One completion; returns the assistant message (tool calls assembled from the stream)."""
    if not body["stream"]:
        resp = await client.post(url, json=body)
        resp.raise_for_status()
        message: dict[str, Any] = resp.json()["choices"][0]["message"]
        return message
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    async with client.stream("POST", url, json=body) as resp:
        resp.raise_for_status()
        async for line in resp.aiter_lines():
            if not line.startswith("data: "):
                continue
            data = line[6:]
            if data == "[DONE]":  # read on to the end of the body, so the connection goes back to the pool
                continue
            for choice in json.loads(data)["choices"]:
                delta = choice["delta"]
                if delta.get("content"):
                    content.append(delta["content"])
                for tc in delta.get("tool_calls") or ():
                    slot = calls.setdefault(tc["index"], {"id": "", "type": "function",
                                                          "function": {"name": "", "arguments": ""}})
                    slot["id"] = tc.get("id") or slot["id"]
                    fn = tc.get("function") or {}
                    slot["function"]["name"] += fn.get("name") or ""
                    slot["function"]["arguments"] += fn.get("arguments") or ""
    out: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if calls:
        out["tool_calls"] = [calls[i] for i in sorted(calls)]
    return out


async def raw_turn(client: httpx.AsyncClient, url: str, ws: Path, case: Case, system: str,
                   schemas: list[dict[str, Any]], store: RawStore | None, session: str) -> Sample:
    """One turn of the minimal loop."""
    c0, t0 = time.process_time(), time.perf_counter()
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": PROMPT}]
    if store:
        store.append(session, 0, messages[1:])
    calls = 0
    while True:
        body: dict[str, Any] = {"model": case.model, "stream": case.stream, "tools": schemas,
                                "messages": messages}
        if case.stream:
            body["stream_options"] = {"include_usage": True}
        message = await raw_call(client, f"{url}/chat/completions", body)
        calls += 1
        start = len(messages) - 1
        messages.append(message)
        for tc in message.get("tool_calls") or ():
            args = json.loads(tc["function"]["arguments"])
            text = (ws / args["path"]).read_text(encoding="utf-8")
            messages.append({"role": "tool", "tool_call_id": tc["id"], "content": number_lines(text)})
        if store:
            store.append(session, start, messages[start + 1:])
        if not message.get("tool_calls"):
            break
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    if calls != case.rounds + 1:
        raise RuntimeError(f"raw loop made {calls} calls, expected {case.rounds + 1}")
    return Sample(elapsed / calls, cpu / calls)


# ---------------------------------------------------------------- driver

def cases(quick: bool) -> list[Case]:
    sizes = (20,) if quick else (20, 50, 100)
    out = [Case(n, stream, True) for n in sizes for stream in (True, False)]
    mid = 20 if quick else 50
    out += [Case(mid, stream, False) for stream in (True, False)]
    return out


Samples = dict[Case, tuple[list[Sample], list[Sample]]]


async def measure(quick: bool, repeats: int | None = None) -> Samples:
    """Case -> (agentls samples, raw samples), paired by repeat."""
    reps = repeats or (3 if quick else 9)
    out: Samples = {}
    with provider() as prov, tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "bench.txt").write_text(bench_file_text())
        url = prov.openai_url
        system, schemas = await wire_setup(url, ws)
        store = RawStore(Path(tmp) / "raw.db")
        db = Path(tmp) / "agentls.db"
        async with httpx.AsyncClient(timeout=60) as client:
            warm = Case(5, True, True)
            await agentls_turn(url, ws, warm, db)
            await raw_turn(client, url, ws, warm, system, schemas, store, "warm")
            for rep in range(reps):
                for ci, case in enumerate(cases(quick)):
                    a, r = out.setdefault(case, ([], []))
                    session = f"raw-{rep}-{ci}"
                    raw_store = store if case.persist else None
                    if (rep + ci) % 2 == 0:
                        a.append(await agentls_turn(url, ws, case, db))
                        r.append(await raw_turn(client, url, ws, case, system, schemas, raw_store, session))
                    else:
                        r.append(await raw_turn(client, url, ws, case, system, schemas, raw_store, session))
                        a.append(await agentls_turn(url, ws, case, db))
        store.close()
    return out


def paired_ratio(a: list[float], r: list[float]) -> float:
    """The median of the per-repeat ratios: a drift in the machine's load hits both sides of a pair."""
    return median([x / y for x, y in zip(a, r, strict=True) if y > 0])


def paired_diff(a: list[float], b: list[float]) -> float:
    return median([x - y for x, y in zip(a, b, strict=True)])


def rows_from(samples: Samples) -> list[Row]:
    rows = []
    for case, (a_s, r_s) in samples.items():
        if not case.persist:
            continue
        a, r = [s.wall for s in a_s], [s.wall for s in r_s]
        ratio = paired_ratio(a, r)
        rows.append(Row(case.label, f"{median(a) * 1000:.2f}", f"{median(r) * 1000:.2f} (raw httpx loop)",
                        f"{ratio:.2f}×", f"≤ {TARGET_RATIO}× raw", ok=ratio <= TARGET_RATIO))
    by_key = {(c.rounds, c.stream, c.persist): v for c, v in samples.items()}
    for (n, stream, persist), (a_off, r_off) in by_key.items():
        if persist or (n, stream, True) not in by_key:
            continue
        a_on, r_on = by_key[(n, stream, True)]
        label = f"N={n}, stream {'on' if stream else 'off'}"
        a_cpu, r_cpu = [s.cpu for s in a_on], [s.cpu for s in r_on]
        rows.append(Row(f"loop CPU per iteration, {label}, persistence on (ms, this process, all threads)",
                        f"{median(a_cpu) * 1000:.2f}", f"{median(r_cpu) * 1000:.2f} (raw httpx loop)",
                        f"{paired_ratio(a_cpu, r_cpu):.2f}×", ""))
        rows.append(Row(f"persistence cost per round, {label} (ms, on − off, paired)",
                        f"{paired_diff([s.wall for s in a_on], [s.wall for s in a_off]) * 1000:.2f}",
                        f"{paired_diff([s.wall for s in r_on], [s.wall for s in r_off]) * 1000:.2f} (raw sqlite3)",
                        "", ""))
    return rows


def run(quick: bool = False) -> list[Row]:
    return rows_from(asyncio.run(measure(quick)))


# ---------------------------------------------------------------- profiling

async def _profile(rounds: int, stream: bool, persist: bool) -> None:
    from pyinstrument import Profiler

    with provider() as prov, tempfile.TemporaryDirectory(prefix="agentls-prof-") as tmp:
        ws = Path(tmp)
        (ws / "bench.txt").write_text(bench_file_text())
        case = Case(rounds, stream, persist)
        await agentls_turn(prov.openai_url, ws, Case(5, stream, persist), ws / "s.db")
        profiler = Profiler(interval=0.0005, async_mode="enabled")
        profiler.start()
        sample = await agentls_turn(prov.openai_url, ws, case, ws / "s.db")
        profiler.stop()
        print(f"{sample.wall * 1000:.2f} ms/iteration over {rounds + 1} iterations", file=sys.stderr)
        print(profiler.output_text(unicode=True, color=False, show_all=False))


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", type=int, metavar="N", help="profile one agentls turn of N rounds (pyinstrument)")
    p.add_argument("--no-stream", action="store_true", help="with --profile: streaming off")
    p.add_argument("--no-persist", action="store_true", help="with --profile: persistence off")


def _maybe_profile(args: argparse.Namespace) -> bool:
    if not args.profile:
        return False
    asyncio.run(_profile(args.profile, not args.no_stream, not args.no_persist))
    return True


def main(argv: list[str] | None = None) -> int:
    return cli("loop_overhead", run, argv, extra=_options, alternative=_maybe_profile)


if __name__ == "__main__":
    sys.exit(main())
