"""Shared helpers for the benchmarks: statistics, RSS, the scripted provider process, the table printer."""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NA = "n/a"


# ---------------------------------------------------------------- statistics

def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100), linear interpolation between closest ranks."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    k = (len(ordered) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo))


def ms(seconds: float) -> float:
    return seconds * 1000.0


# ---------------------------------------------------------------- memory

def _status_kb(pid: int | str, field_name: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def rss_kb(pid: int | str = "self") -> int | None:
    """Resident set size now (VmRSS), in KiB; None where /proc is missing."""
    return _status_kb(pid, "VmRSS")


def peak_rss_kb(pid: int | str = "self") -> int | None:
    """Peak resident set size (VmHWM), in KiB."""
    return _status_kb(pid, "VmHWM")


def cpu_seconds(pid: int | str = "self") -> float | None:
    """User + system CPU time a process has used so far (all its threads), from /proc/<pid>/stat."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def load_average() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


# ---------------------------------------------------------------- the machine

def machine() -> str:
    """One line: CPU model, logical CPUs, memory, OS, Python."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            kb = int(fh.readline().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    virt = " (KVM guest)" if Path("/sys/hypervisor").exists() or _is_vm() else ""
    return (f"{cpu}{virt}, {os.cpu_count()} logical CPUs{mem}, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")


def _is_vm() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            return " hypervisor" in fh.read()
    except OSError:
        return False


# ---------------------------------------------------------------- the table

@dataclass
class Row:
    """One line of the result table. ``ok`` is whether the target was met (None: no target or no figure)."""

    metric: str
    agentls: str
    baseline: str = ""
    ratio: str = ""
    target: str = ""
    ok: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def na_rows(metrics: Sequence[tuple[str, str]], why: str) -> list[Row]:
    return [Row(metric, f"{NA} ({why})", target=target) for metric, target in metrics]


def table(rows: Sequence[Row]) -> str:
    head = ["metric", "agentls", "baseline", "ratio", "target"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    for r in rows:
        mark = "" if r.ok is None or not r.target else (" ✓" if r.ok else " ✗")
        cells = [r.metric, r.agentls, r.baseline, r.ratio, r.target + mark]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def rows_to_json(rows: Sequence[Row]) -> str:
    return json.dumps([{"metric": r.metric, "agentls": r.agentls, "baseline": r.baseline, "ratio": r.ratio,
                        "target": r.target, "ok": r.ok} for r in rows])


def rows_from_json(text: str) -> list[Row]:
    return [Row(d["metric"], d["agentls"], d["baseline"], d["ratio"], d["target"], d["ok"]) for d in json.loads(text)]


def cli(prog: str, run: Callable[[bool], list[Row]], argv: list[str] | None = None,
        extra: Callable[[argparse.ArgumentParser], None] | None = None,
        alternative: Callable[[argparse.Namespace], bool] | None = None) -> int:
    """The command line of one benchmark: ``--quick``, ``--json`` (rows for ``bench/run.py``)."""
    p = argparse.ArgumentParser(prog=f"python -m bench.{prog}")
    p.add_argument("--quick", action="store_true", help="fewer repeats and smaller sizes")
    p.add_argument("--json", action="store_true", help="print the rows as JSON (for bench/run.py)")
    if extra is not None:
        extra(p)
    args = p.parse_args(argv)
    if alternative is not None and alternative(args):
        return 0
    rows = run(args.quick)
    print(rows_to_json(rows) if args.json else table(rows))
    return 0


def fmt_ms(value: float, digits: int = 1) -> str:
    return f"{value:.{digits}f} ms"


def fmt_ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b > 0 else NA


# ---------------------------------------------------------------- the scripted provider, in its own process

@dataclass
class Provider:
    url: str
    openai_url: str
    process: subprocess.Popen[bytes]
    record: Path | None

    def timestamps(self) -> dict[str, float]:
        """Chunk id -> time.monotonic() when the provider wrote it (after stop, with ``record``)."""
        if self.record is None or not self.record.exists():
            return {}
        data: dict[str, float] = json.loads(self.record.read_text())
        return data


@contextmanager
def provider(*, strict: bool = False, record: Path | None = None, env: dict[str, str] | None = None
             ) -> Iterator[Provider]:
    """``bench.provider`` in a child process (its own interpreter and event loop, on the other core).

    ``strict=False`` by default: the benchmarks time the client, and strict validation would add the
    provider's O(transcript) checking to every round of both the agent and the baseline.
    """
    cmd = [sys.executable, "-m", "bench.provider"]
    if strict:
        cmd.append("--strict")
    if record is not None:
        cmd += ["--record", str(record)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, **(env or {}), "PYTHONPATH": _pythonpath()})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the scripted provider did not start (run python -m bench.provider to see why)")
        info = json.loads(line)
        yield Provider(info["url"], info["openai_url"], proc, record)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _pythonpath() -> str:
    parts = [str(ROOT)]
    if os.environ.get("PYTHONPATH"):
        parts.append(os.environ["PYTHONPATH"])
    return os.pathsep.join(parts)


def bench_file_text(lines: int = 40) -> str:
    """The file every read_file round reads: small source-like text."""
    return "".join(f"def function_{i}(x: int) -> int:  # line {i} of the benchmark file\n    return x + {i}\n"
                   for i in range(lines // 2))


def now() -> float:
    return time.perf_counter()
