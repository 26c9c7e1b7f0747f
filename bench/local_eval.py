"""The local model's evaluation set: small tasks run with the real model, each checked on disk and in output.

    .venv/bin/python bench/local_eval.py [--only NAME,NAME] [--repeat N] [--json FILE]

Each task gets a fresh copy of one small project (always at the same path name, so every task shares
the one system prompt and the saved slot: agent/local/slots.py), runs ``agentls run --json`` as a
user would (no API key: the embedded model), and is judged by what is on disk and what was answered:

- **right**: the task's own check passes (files as expected, the answer names what it must);
- **false success**: the task is not right, the run exited 0, and the footer does not contradict it
  (it shows no failed call, refusal, or edit not made, and for an edit task it shows a change);
- **stray files**: files that appeared and that the task did not ask for.

It also times the README question of the quickstart on examples/hello: once cold, then warm. Numbers
are printed, never asserted. Needs the ``local`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.local_eval_tasks import BASE, TASKS, Task

CONTRADICTIONS = ("failed", "refused", "not made", "stopped")


@dataclass
class Outcome:
    task: str
    right: bool
    why: str
    seconds: float
    exit_code: int
    footer: str
    false_success: bool
    stray: list[str] = field(default_factory=list)
    answer: str = ""
    calls: list[str] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)  # the run's transcript (in --json only)


def _files(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[p.relative_to(root).as_posix()] = p.read_text(errors="replace")
    return out


def _env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("AGENTLS_")}
    env["AGENTLS_DATA_DIR"] = str(data)
    env["AGENTLS_CONFIG"] = str(data / "no-user-config.toml")
    for key in ("AGENTLS_CACHE_DIR",):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def agentls_run(workspace: Path, prompt: str, *extra: str, data: Path) -> tuple[int, dict[str, Any], str, float]:
    cmd = [sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--no-persist", "--json", *extra,
           prompt]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(data), cwd=ROOT, timeout=1800)
    seconds = time.monotonic() - started
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        result = {}
    return proc.returncode, result, proc.stderr, seconds


def run_task(task: Task, scratch: Path) -> Outcome:
    ws = scratch / "proj"  # the same name every time: one system prompt, one saved slot
    if ws.exists():
        shutil.rmtree(ws)
    ws.mkdir(parents=True)
    for rel, body in {**BASE, **task.files}.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(body)
    before = _files(ws)
    code, result, err, seconds = agentls_run(ws, task.prompt, *task.args, data=scratch / "data")
    after = _files(ws)
    answer = str(result.get("final_response") or "")
    footer = err.rstrip("\n").rsplit("\n", 1)[-1] if err.strip() else ""
    right, why = task.check(before, after, answer)
    stray = sorted(set(after) - set(before) - set(task.creates))
    if stray:
        right, why = False, f"stray files {stray}; {why}"
    contradicted = code != 0 or any(w in footer for w in CONTRADICTIONS) or (
        task.edits and not footer.startswith("changed:"))
    calls = [f"{c['function']['name']}({c['function']['arguments'][:80]})"
             for m in result.get("messages", []) for c in m.get("tool_calls") or []]
    return Outcome(task.name, right, why, round(seconds, 1), code, footer, not right and not contradicted, stray,
                   answer[:300], calls, list(result.get("messages", [])))


def readme_question(scratch: Path, times: int) -> list[float]:
    """The quickstart's question on a copy of examples/hello: the first run may be cold, the rest warm."""
    ws = scratch / "hello"
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(ROOT / "examples" / "hello", ws)
    out = []
    for _ in range(times):
        code, result, err, seconds = agentls_run(ws, "What does README.md say?", data=scratch / "data")
        answer = str(result.get("final_response") or "").lower()
        print(f"  README question: {seconds:.1f} s, exit {code}, answer: {answer[:100]!r}", file=sys.stderr)
        out.append(round(seconds, 1))
    return out


def table(outcomes: list[Outcome], readme: list[float], load: tuple[str, str]) -> str:
    right = sum(o.right for o in outcomes)
    lines = ["| task | right | s | exit | footer | note |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        note = o.why if not o.right else ""
        if o.false_success:
            note = "FALSE SUCCESS: " + note
        lines.append(f"| {o.task} | {'✓' if o.right else '✗'} | {o.seconds:.1f} | {o.exit_code} | {o.footer} | "
                     f"{note[:120]} |")
    secs = [o.seconds for o in outcomes]
    summary = [
        "",
        f"- tasks right: **{right}/{len(outcomes)} ({100 * right / max(1, len(outcomes)):.0f}%)** (target ≥ 90%)",
        f"- false claims of success the footer does not contradict: **{sum(o.false_success for o in outcomes)}**"
        " (target 0)",
        f"- stray files: **{sum(len(o.stray) for o in outcomes)}** (target 0)",
        f"- median seconds per task: **{statistics.median(secs):.1f} s** (min {min(secs):.1f}, max {max(secs):.1f};"
        " each a whole `agentls run`: start, model load, every step)" if secs else "",
        f"- README question (`What does README.md say?` on examples/hello): runs of {', '.join(map(str, readme))} s;"
        f" warm median **{statistics.median(readme[1:]) if len(readme) > 1 else float('nan'):.1f} s** (target ≤ 10 s)",
        f"- load average before / after: {load[0]} / {load[1]}",
    ]
    return "\n".join(lines + summary)


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="comma-separated task names")
    ap.add_argument("--readme-runs", type=int, default=3)
    ap.add_argument("--json", help="write the outcomes to this file")
    ns = ap.parse_args()
    from agentls.agent.local import MISSING_EXTRA_MESSAGE, local_available

    if not local_available():
        print(MISSING_EXTRA_MESSAGE, file=sys.stderr)
        return 2
    chosen: list[Task] = TASKS
    if ns.only:
        names = set(ns.only.split(","))
        chosen = [t for t in TASKS if t.name in names]
    load_before = _load()
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="agentls-eval-") as tmp:
        scratch = Path(tmp)
        readme = readme_question(scratch, ns.readme_runs) if ns.readme_runs else []
        for task in chosen:
            o = run_task(task, scratch)
            outcomes.append(o)
            print(f"{o.task}: {'right' if o.right else 'WRONG'} in {o.seconds} s, exit {o.exit_code}, {o.footer!r}; "
                  f"{o.why}; calls {o.calls}; answer {o.answer[:160]!r}", file=sys.stderr)
    print(table(outcomes, readme, (load_before, _load())))
    if ns.json:
        Path(ns.json).write_text(json.dumps([o.__dict__ for o in outcomes], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
