"""The README question with the embedded model: first ever, in a never-seen workspace, and warm.

    .venv/bin/python bench/first_answer.py [--repeat 3]

Each run is a whole ``agentls run "What does README.md say?"`` on a copy of examples/hello (start, model
load, every step), with a cache dir of its own whose ``models/`` links to the real model and its stamp
(so the saved slots start empty and the 1.1 GB model is not copied):

- **first ever**: no saved slot at all, the whole prompt is processed (the baseline of this run);
- **first after setup**: a cache dir of its own primed by ``agentls model prime`` (what scripts/setup runs;
  its own time is printed apart), then the first turn in a workspace;
- **never-seen workspace**: a copy under a new folder name, so its system prompt differs: the slot of
  another workspace covers the static part and the tool schemas (agent/local/slots.py);
- **warm**: the same workspace again: its own slot covers the whole system prompt.

Each row twice: **model reloaded** (``local_keep_alive = 0``: every run starts and loads its own server, then
restores the saved prompt) and **model kept** (the default: the server the previous run or ``model prime``
left loaded is used, its prompt cache warm; agent/local/keeper.py). The kept servers are stopped at the end.

Prints the medians with the prompt tokens the turn processed and those the cache covered (from the
result's ``usage``) and the load average. Numbers are printed, never asserted.
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "What does README.md say?"


def _cache_dir() -> Path:
    out = subprocess.run([sys.executable, "-m", "agentls.server", "model", "path"], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.strip()
    return Path(out).parent.parent


def link_model(models: Path, into: Path) -> None:
    """A models dir of its own (its slots start empty) with the real model and its stamp linked in."""
    into.mkdir(parents=True)
    for f in models.iterdir():
        if f.is_file() and f.name.endswith((".gguf", ".verified.json")):
            (into / f.name).symlink_to(f)


def _env(cache: Path, data: Path, keep: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("AGENTLS_")}
    env.update(AGENTLS_CACHE_DIR=str(cache), AGENTLS_DATA_DIR=str(data), AGENTLS_CONFIG=str(data / "none.toml"),
               AGENTLS_LOCAL_KEEP_ALIVE="300" if keep else "0")
    return env


def prime(cache: Path, data: Path, keep: bool) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "agentls.server", "model", "prime"], capture_output=True, text=True,
                   env=_env(cache, data, keep), cwd=ROOT, timeout=600, check=True)
    return time.monotonic() - started


def stop_kept(cache: Path, data: Path) -> None:
    subprocess.run([sys.executable, "-m", "agentls.server", "model", "stop"], capture_output=True, text=True,
                   env=_env(cache, data, True), cwd=ROOT, timeout=60)


def run(workspace: Path, cache: Path, data: Path, keep: bool = False) -> dict[str, Any]:
    env = _env(cache, data, keep)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--json", "--quiet",
                           "--no-persist", QUESTION], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    seconds = time.monotonic() - started
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        result = {}
    usage = result.get("usage") or {}
    answer = str(result.get("final_response") or "")
    return {"seconds": round(seconds, 1), "exit": proc.returncode, "prompt": usage.get("prompt_tokens", 0),
            "cached": usage.get("cached_tokens", 0), "steps": result.get("api_calls", 0), "answer": answer[:80]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=3)
    ns = p.parse_args(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        cache = scratch / "cache"
        link_model(_cache_dir() / "models", cache / "models")
        rows: dict[str, list[dict[str, Any]]] = {}
        primes: dict[bool, list[float]] = {False: [], True: []}

        def workspace(name: str) -> Path:
            ws = scratch / name / "hello"  # the same folder name, another path ...
            if not ws.exists():
                shutil.copytree(ROOT / "examples" / "hello", ws)
                (ws / f"notes-{name}.md").write_text("notes\n")  # ... and another listing: a new system prompt
            return ws

        rows["first ever"] = [run(workspace("w0"), cache, scratch / "data")]
        caches = [cache]
        try:
            for keep in (False, True):
                how = "model kept" if keep else "model reloaded"
                for name in ("first after setup", "never-seen workspace", "warm"):
                    rows[f"{name}, {how}"] = []
                for i in range(ns.repeat):
                    primed = scratch / f"primed-cache-{keep}-{i}"
                    caches.append(primed)
                    link_model(_cache_dir() / "models", primed / "models")
                    primes[keep].append(round(prime(primed, scratch / "data", keep), 1))
                    rows[f"first after setup, {how}"].append(run(workspace(f"p{keep}{i}"), primed, scratch / "data",
                                                                 keep))
                if keep:  # another workspace's run leaves the server loaded (not timed)
                    run(workspace("w0"), cache, scratch / "data", keep)
                for i in range(ns.repeat):
                    ws = workspace(f"w{keep}{i + 1}")
                    rows[f"never-seen workspace, {how}"].append(run(ws, cache, scratch / "data", keep))
                    rows[f"warm, {how}"].append(run(ws, cache, scratch / "data", keep))
        finally:
            for c in caches:
                stop_kept(c, scratch / "data")
    print(f"load average before {load:.1f}, after {os.getloadavg()[0]:.1f}; agentls model prime took "
          f"{', '.join(map(str, primes[False]))} s (model reloaded), {', '.join(map(str, primes[True]))} s (kept)\n")
    print("| README question | median s | runs (s) | prompt tokens / cached (median) | exit |")
    print("|---|---|---|---|---|")
    for name, runs in rows.items():
        secs = [r["seconds"] for r in runs]
        print(f"| {name} | {statistics.median(secs):.1f} | {', '.join(map(str, secs))} | "
              f"{statistics.median(r['prompt'] for r in runs):.0f} / {statistics.median(r['cached'] for r in runs):.0f}"
              f" | {', '.join(str(r['exit']) for r in runs)} |")
    for name, runs in rows.items():
        print(f"{name}: {runs[-1]['answer']!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
