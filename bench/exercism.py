"""Outside work: Exercism Python exercises, agentls with the embedded model beside Aider and the bare model.

    .venv/bin/python bench/exercism.py --exercises DIR [--quick] [--count 40] [--agents agentls,bare,...]
        [--aider-python PATH] [--out results.jsonl] [--resume] [--report-only] [--tries 1|2] [--skip N]

``DIR`` is a checkout of the public exercism/python repository (bench/README.md says how to get one; the
exercises stay out of this repository). The pick and the task folders: bench/exercism_tasks.py. Every agent
gets the same prompt in a fresh folder per task, and the exercise's own tests judge; a failed first try
gets a second turn in the same session with the failing tests' output (Aider's benchmark protocol). The
agents, in the same run, against the same model:

- ``agentls``: ``agentls run -w FOLDER PROMPT`` with no API key (the embedded model), then ``--session``;
- ``aider-whole`` / ``aider-diff``: Aider (its own venv: ``--aider-python``) on the same llama.cpp server,
  started here with ``python -m agentls.agent.local.serve`` on the same GGUF (bench/exercism_aider.py);
- ``bare``: one chat completion with the instructions, stub and tests asking for the whole file; its code
  block is written as the file (the second try continues the same chat).

Each try is one JSON line in ``--out`` as it ends (``--resume`` skips the tries already there), and the
table is printed from that file. Numbers are printed, never asserted. Not a CI test: it takes hours.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.exercism_agents import AGENTS, Agent, ModelServer, make_agent
from bench.exercism_tasks import Exercise, judge, lay_out, pick

QUICK_COUNT = 5


def _run_one(agent: Agent, ex: Exercise, folder: Path, tries: int = 2) -> dict[str, Any]:
    lay_out(ex, folder)
    stub = (folder / ex.solution).read_text()
    row: dict[str, Any] = {"agent": agent.name, "exercise": ex.name}
    try:
        first = agent.attempt(folder, ex, ex.prompt, first=True)
        passed1, output = judge(folder, ex)
        row.update(seconds1=round(first.seconds, 1), exit1=first.exit_code, pass1=passed1, note1=first.note,
                   unchanged=(folder / ex.solution).read_text() == stub,
                   false_success1=first.exit_code == 0 and not passed1)
        row.update(pass2=passed1, seconds2=0.0, exit2=None, false_success2=False, tries=tries)
        if not passed1 and tries > 1:
            second = agent.attempt(folder, ex, ex.retry_prompt(output), first=False)
            passed2, _ = judge(folder, ex)
            row.update(pass2=passed2, seconds2=round(second.seconds, 1), exit2=second.exit_code, note2=second.note,
                       false_success2=second.exit_code == 0 and not passed2)
    finally:
        agent.finish()
    return row


def _load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.1f}%)" if d else "0/0"


def report(rows: list[dict[str, Any]]) -> str:
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    tasks = {r["exercise"] for r in rows}
    common = [t for t in tasks if all(any(r["agent"] == a and r["exercise"] == t for r in rows) for a in agents)]
    lines = [f"{len(common)} exercises every agent finished (of {len(tasks)} started)", "",
             "| agent | pass@1 | pass, two tries | median s (try 1) | stub unchanged | exit 0, tests fail |",
             "|---|---|---|---|---|---|"]
    for a in agents:
        mine = [r for r in rows if r["agent"] == a and r["exercise"] in common]
        n = len(mine)
        secs = [r["seconds1"] for r in mine if "seconds1" in r]
        exits = [r for r in mine if r.get("exit1") is not None]
        false = sum(bool(r.get("false_success1")) for r in mine) + sum(bool(r.get("false_success2")) for r in mine)
        false_text = f"{false} of {len(exits) + sum(r.get('exit2') is not None for r in mine)} runs" if exits \
            else "n/a (no exit code)"
        two = _pct(sum(bool(r.get('pass2')) for r in mine), n) if any(r.get("tries", 2) > 1 for r in mine) \
            else "not run (--tries 1)"
        lines.append(f"| {a} | {_pct(sum(bool(r.get('pass1')) for r in mine), n)} | {two} | "
                     f"{statistics.median(secs) if secs else 0:.1f} | {sum(bool(r.get('unchanged')) for r in mine)} | "
                     f"{false_text} |")
    lines += ["", "| exercise | " + " | ".join(agents) + " |", "|---|" + "---|" * len(agents)]
    for t in sorted(common):
        cells = []
        for a in agents:
            r = next(r for r in rows if r["agent"] == a and r["exercise"] == t)
            mark = "✓" if r.get("pass1") else ("✓²" if r.get("pass2") else ("=" if r.get("unchanged") else "✗"))
            cells.append(f"{mark} {r.get('seconds1', 0):.0f}s" + (f" exit {r['exit1']}" if r.get("exit1") else ""))
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    lines += ["", "✓ first try, ✓² second try, = stub left unchanged by the first try, ✗ changed but failing."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--exercises", type=Path, required=True, help="an exercism/python checkout")
    p.add_argument("--count", type=int, default=40)
    p.add_argument("--quick", action="store_true", help=f"{QUICK_COUNT} tasks")
    p.add_argument("--skip", type=int, default=0, help="leave out the first N of the pick (a run continued elsewhere)")
    p.add_argument("--agents", default=",".join(AGENTS))
    p.add_argument("--aider-python", default=os.environ.get("AIDER_PYTHON"),
                   help="the python of a venv with aider-chat (never the project's)")
    p.add_argument("--out", type=Path, default=None, help="JSON lines, one per task and agent")
    p.add_argument("--resume", action="store_true", help="skip the (agent, exercise) pairs --out already has")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--tries", type=int, choices=(1, 2), default=2,
                   help="1: pass@1 only (no second turn with the test output), when time is short")
    ns = p.parse_args(argv)
    out = ns.out or Path(tempfile.gettempdir()) / "agentls-exercism.jsonl"
    if ns.report_only:
        print(report(_load(out)))
        return 0
    if importlib.util.find_spec("pytest") is None:  # the judge: without it every try would count as failing
        p.error(f"the judge runs the exercises' tests with pytest, which {sys.executable} lacks: "
                "./scripts/setup --dev (or pip install pytest into that venv)")
    names = [a for a in ns.agents.split(",") if a]
    unknown = [a for a in names if a not in AGENTS]
    if unknown:
        p.error(f"unknown agents {unknown}; known: {', '.join(AGENTS)}")
    if any(a.startswith("aider") for a in names) and not ns.aider_python:
        print("aider skipped: give --aider-python (or AIDER_PYTHON)", file=sys.stderr)
        names = [a for a in names if not a.startswith("aider")]
    scratch = Path(tempfile.mkdtemp(prefix="exercism-"))
    exercises = pick(ns.exercises, QUICK_COUNT if ns.quick else ns.count, scratch)[ns.skip:]
    print(f"{len(exercises)} exercises: {', '.join(e.name for e in exercises)}", file=sys.stderr)
    done = {(r["agent"], r["exercise"]) for r in _load(out)} if ns.resume else set()
    if not ns.resume:
        out.write_text("")
    load_before = os.getloadavg()
    server = ModelServer() if any(a != "agentls" for a in names) else None
    try:
        agents = [make_agent(a, server=server, scratch=scratch, aider_python=ns.aider_python) for a in names]
        for ex in exercises:  # task by task, so a run cut short still compares the agents on the same tasks
            for agent in agents:
                if (agent.name, ex.name) in done:
                    continue
                started = time.monotonic()
                row = _run_one(agent, ex, scratch / agent.name / ex.name, ns.tries)
                print(f"{ex.name:24} {agent.name:12} pass1={row.get('pass1')} pass2={row.get('pass2')} "
                      f"unchanged={row.get('unchanged')} exit={row.get('exit1')} "
                      f"{time.monotonic() - started:.0f}s", file=sys.stderr)
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
    finally:
        if server is not None:
            server.close()
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"load average before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f}; results in {out}",
          file=sys.stderr)
    print(report(_load(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
