"""5. Streaming latency: from the provider writing a chunk to the LSP client receiving its ``agent/update``.

The scripted provider (its own process) answers one turn with 1,000 words, one SSE frame per word, 3 ms
apart, and records ``time.monotonic()`` (system-wide on Linux) as it writes each frame to the socket.
The benchmark client reads ``agentls lsp``'s stdout and stamps each ``agent/update`` as soon as its bytes
are complete. Latency per word = received − written; p50 and p99 over the 1,000 words.

The baseline, in the same run against the same provider: a bare httpx SSE reader in the client
process, stamping each word as its ``data:`` line arrives (the transport floor, with no agent and no
stdio hop in between).

``python -m bench.streaming [--quick]`` (quick: 200 words)
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import Row, cli, fmt_ratio, percentile, provider
from bench.lspface import bench_options, lsp_server, new_session, turn
from bench.rpc import face_available

DELAY_MS = 3
P50_TARGET_MS = 2.0
BASELINE_START = 50_000
WORD = re.compile(r"w\d{5}")


async def agentls_receipts(url: str, tmp: Path, words: int) -> dict[str, float]:
    received: dict[str, float] = {}

    def on_notification(method: str, params: Any, stamp: float) -> None:
        if method != "agent/update" or not isinstance(params, dict):
            return
        update = params.get("update") or {}
        if update.get("sessionUpdate") != "agent_message_chunk":
            return
        text = (update.get("content") or {}).get("text") or ""
        for word in WORD.findall(text):
            received.setdefault(word, stamp)

    model = f"stream:{words}:{DELAY_MS}"
    async with lsp_server(tmp, bench_options(model, url), stderr=tmp / "lsp.log") as peer:
        peer.on_notification = on_notification
        session = await new_session(peer, tmp)
        result = await turn(peer, session, "Say the words.")
        if not result.get("completed"):
            raise RuntimeError(f"the streaming turn failed: {result}")
    return received


async def raw_receipts(url: str, words: int) -> dict[str, float]:
    received: dict[str, float] = {}
    body = {"model": f"stream:{words}:{DELAY_MS}:{BASELINE_START}", "stream": True,
            "messages": [{"role": "user", "content": "Say the words."}]}
    async with httpx.AsyncClient(timeout=60) as client, \
            client.stream("POST", f"{url}/chat/completions", json=body) as resp:
        async for line in resp.aiter_lines():
            stamp = time.monotonic()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[6:]).get("choices") or ():
                for word in WORD.findall((choice.get("delta") or {}).get("content") or ""):
                    received.setdefault(word, stamp)
    return received


def latencies(sent: dict[str, float], received: dict[str, float]) -> list[float]:
    return [(received[w] - sent[w]) * 1000 for w in received if w in sent]


async def measure(quick: bool) -> dict[str, float]:
    words = 200 if quick else 1000
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp_name:
        tmp = Path(tmp_name)
        record = tmp / "sent.json"
        with provider(record=record) as prov:
            ours = await agentls_receipts(prov.openai_url, tmp, words)
            base = await raw_receipts(prov.openai_url, words)
        sent = prov.timestamps()
    a, b = latencies(sent, ours), latencies(sent, base)
    if len(a) < words * 0.99 or len(b) < words * 0.99:
        raise RuntimeError(f"words lost: agentls {len(a)}, raw {len(b)} of {words}")
    return {"words": words, "p50": percentile(a, 50), "p99": percentile(a, 99),
            "base_p50": percentile(b, 50), "base_p99": percentile(b, 99)}


def rows_from(f: dict[str, float]) -> list[Row]:
    n = int(f["words"])
    return [
        Row(f"streaming latency p50, provider write → LSP client `agent/update` ({n:,} chunks)",
            f"{f['p50']:.2f} ms", f"{f['base_p50']:.2f} ms (bare httpx SSE reader)",
            fmt_ratio(f["p50"], f["base_p50"]), f"≤ {P50_TARGET_MS:.0f} ms", ok=f["p50"] <= P50_TARGET_MS),
        Row("  p99", f"{f['p99']:.2f} ms", f"{f['base_p99']:.2f} ms (bare httpx SSE reader)",
            fmt_ratio(f["p99"], f["base_p99"]), ""),
    ]


def run(quick: bool = False) -> list[Row]:
    if not face_available("lsp"):
        return [Row("streaming latency p50", "n/a (face not available)", target=f"≤ {P50_TARGET_MS:.0f} ms")]
    return rows_from(asyncio.run(measure(quick)))


def main(argv: list[str] | None = None) -> int:
    return cli("streaming", run, argv)


if __name__ == "__main__":
    sys.exit(main())
