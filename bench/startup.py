"""2. Time to the first ``initialize`` answer, measured from process start.

For ``agentls lsp`` and ``agentls acp`` (started as an editor starts them, through the ``agentls``
console script), beside the import-time floor of each framework alone: a bare pygls server
(``bench/bare_pygls.py``) and a bare ``acp`` SDK agent (``bench/bare_acp.py``). The clock starts just
before the process is spawned; ``initialize`` is written to its stdin at once (it waits in the pipe) and
the clock stops when the answer's last byte is read. Runs alternate between the four servers; each
figure is the median.

``python -m bench.startup [--quick]``
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, Row, cli, fmt_ms, fmt_ratio, median
from bench.rpc import Peer, agentls_command, face_available, lsp_initialize_params, lsp_shutdown

LSP_TARGET_S = 0.6
HERMES_ACP_S = 1.1
ACP_TARGET_S = HERMES_ACP_S / 2

ACP_INIT = {"protocolVersion": 1, "clientInfo": {"name": "agentls-bench", "version": "1"},
            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}}


def child_env(tmp: Path) -> dict[str, str]:
    """As an editor starts it: byte-code caching on (the harness may have turned it off), a private data dir."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"AGENTLS_DATA_DIR": str(tmp / "data"), "PYTHONPATH": str(ROOT), "AGENTLS_BENCH_KEY": "bench"})
    return env


async def time_to_initialize(argv: list[str], framing: str, tmp: Path, *, ready: bool = False
                             ) -> tuple[float, float | None]:
    """(seconds to the initialize answer, seconds to the first new-session answer when ``ready``)."""
    t0 = time.monotonic()
    peer = await Peer.spawn(argv, framing, env=child_env(tmp), cwd=tmp, inherit_env=False)  # type: ignore[arg-type]
    stamp: list[float] = []
    if framing == "lsp":
        options = {"model": "bench:1", "baseUrl": "http://127.0.0.1:9/v1", "apiKeyEnv": "AGENTLS_BENCH_KEY"}
        fut = peer.send_request("initialize", lsp_initialize_params(tmp, options))
    else:
        fut = peer.send_request("initialize", ACP_INIT)
    fut.add_done_callback(lambda _: stamp.append(time.monotonic()))
    second: float | None = None
    try:
        await asyncio.wait_for(fut, 30)
        if ready:
            if framing == "lsp":
                peer.notify("initialized", {})
                await peer.request("agent/newSession", {"cwd": str(tmp)}, timeout=30)
            else:
                await peer.request("session/new", {"cwd": str(tmp), "mcpServers": []}, timeout=30)
            second = time.monotonic() - t0
    finally:
        if framing == "lsp":
            if not ready:
                peer.notify("initialized", {})
            await peer.close(lambda: lsp_shutdown(peer))
        else:
            await peer.close()
    return stamp[0] - t0, second


def servers() -> dict[str, tuple[list[str], str]]:
    py = sys.executable
    out: dict[str, tuple[list[str], str]] = {
        "bare pygls": ([py, str(ROOT / "bench" / "bare_pygls.py")], "lsp"),
        "bare acp": ([py, str(ROOT / "bench" / "bare_acp.py")], "ndjson"),
    }
    if face_available("lsp"):
        out["agentls lsp"] = ([*agentls_command(), "lsp"], "lsp")
    if face_available("acp"):
        out["agentls acp"] = ([*agentls_command(), "acp"], "ndjson")
    return out


async def measure(quick: bool) -> dict[str, float]:
    """Median seconds per server; ``"<face> ready"`` is the first new-session answer of an agentls face."""
    reps = 3 if quick else 9
    times: dict[str, list[float]] = {}
    todo = servers()
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        for argv, framing in todo.values():  # warm the OS file cache and the .pyc files
            await time_to_initialize(argv, framing, Path(tmp))
        for rep in range(reps):
            names = list(todo) if rep % 2 == 0 else list(reversed(todo))
            for name in names:
                argv, framing = todo[name]
                first, ready = await time_to_initialize(argv, framing, Path(tmp), ready=name.startswith("agentls"))
                times.setdefault(name, []).append(first)
                if ready is not None:
                    times.setdefault(f"{name} ready", []).append(ready)
    return {name: median(v) for name, v in times.items()}


def rows_from(figures: dict[str, float]) -> list[Row]:
    rows = []
    for face, bare, target, target_text in (
        ("agentls lsp", "bare pygls", LSP_TARGET_S, f"≤ {LSP_TARGET_S * 1000:.0f} ms"),
        ("agentls acp", "bare acp", ACP_TARGET_S,
         f"≤ {ACP_TARGET_S * 1000:.0f} ms (½ Hermes ACP ≈ {HERMES_ACP_S * 1000:.0f} ms)"),
    ):
        metric = f"time to first initialize answer: `{face}`"
        base = figures.get(bare)
        base_text = f"{fmt_ms(base * 1000, 0)} ({bare})" if base is not None else "n/a"
        if face not in figures:
            rows.append(Row(metric, "n/a (face not available)", base_text, "", target_text))
            continue
        ours = figures[face]
        rows.append(Row(metric, fmt_ms(ours * 1000, 0), base_text, fmt_ratio(ours, base) if base else "",
                        target_text, ok=ours <= target))
        ready = figures.get(f"{face} ready")
        if ready is not None:
            first_session = "agent/newSession" if face.endswith("lsp") else "session/new"
            rows.append(Row(f"  then the first `{first_session}` answer (framework and core loaded)",
                            fmt_ms(ready * 1000, 0), base_text, fmt_ratio(ready, base) if base else "", ""))
    return rows


def run(quick: bool = False) -> list[Row]:
    return rows_from(asyncio.run(measure(quick)))


def main(argv: list[str] | None = None) -> int:
    return cli("startup", run, argv)


if __name__ == "__main__":
    sys.exit(main())
