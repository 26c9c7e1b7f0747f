"""6. Context work: compression, resume and per-round persistence.

The measurements are ``bench/context_bench.py``'s (written with the store and the compressor); this
module runs them and turns their figures into table rows:
- compressing a synthetic ~200k-token transcript, the summary call excluded (an instant stub), against
  ``json.dumps`` of the same transcript (target ≤ 50 ms);
- resuming a 10,000-message session (``load_messages`` + ``repair``), against a raw ``sqlite3`` SELECT of
  the same rows (target ≤ 200 ms);
- appending one round (assistant with a tool call + its result) in one committed transaction, against raw
  ``sqlite3`` and raw ``aiosqlite`` doing the same. The loop-level persistence cost per round is in the
  loop-overhead rows (persistence on − off).

``python -m bench.context [--quick]``
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import sys
import tempfile
from pathlib import Path

from bench.common import NA, Row, cli, fmt_ms, fmt_ratio

TARGETS = {"compress": 50.0, "resume": 200.0}


def _rows(figures: list[tuple[str, float, str, float]], notes: str) -> list[Row]:
    tokens = re.search(r"~(\d+) estimated tokens", notes)
    size = f"~{int(tokens.group(1)) // 1000}k-token" if tokens else "~200k-token"
    count = re.search(r"resume: (\d+) messages", notes)
    n = f"{int(count.group(1)):,}" if count else "10,000"
    rows = []
    for label, ours, base_label, base in figures:
        target = ""
        ok = None
        if label.startswith("compress"):
            metric = f"compress a {size} transcript (summary call excluded)"
            target, ok = f"≤ {TARGETS['compress']:.0f} ms", ours <= TARGETS["compress"]
        elif label.startswith("resume"):
            metric = f"resume a {n}-message session (load + repair)"
            target, ok = f"≤ {TARGETS['resume']:.0f} ms", ours <= TARGETS["resume"]
        elif label.strip().startswith("of which"):
            metric = "  of which load_messages alone"
        elif label.startswith("append"):
            metric = f"persist one round (store.append_messages) vs {base_label.replace(' insert + commit', '')}"
        else:
            metric = label.strip()
        rows.append(Row(metric, fmt_ms(ours, 2), f"{fmt_ms(base, 2)} ({base_label})", fmt_ratio(ours, base),
                        target, ok=ok))
    return rows


async def _measure(runs: int) -> tuple[list[tuple[str, float, str, float]], str]:
    from bench import context_bench as cb

    figures: list[tuple[str, float, str, float]] = []

    def collect(label: str, ours: float, baseline_label: str, baseline: float) -> None:
        figures.append((label, ours, baseline_label, baseline))

    cb.report = collect  # their printer, replaced by a collector
    out = io.StringIO()
    with contextlib.redirect_stdout(out), tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        await cb.bench_compress(runs)
        await cb.bench_resume(runs, Path(tmp))
        await cb.bench_append(runs, Path(tmp))
    return figures, out.getvalue()


def run(quick: bool = False) -> list[Row]:
    try:
        import bench.context_bench  # noqa: F401
    except ImportError:
        return [Row("context work (compress, resume, per-round persistence)", f"{NA} (bench/context_bench.py missing)")]
    figures, notes = asyncio.run(_measure(3 if quick else 7))
    return _rows(figures, notes)


def main(argv: list[str] | None = None) -> int:
    return cli("context", run, argv)


if __name__ == "__main__":
    sys.exit(main())
