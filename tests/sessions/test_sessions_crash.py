"""kill -9 at random moments: every committed round survives, and only whole rounds exist."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from agentls.agent.sessions import SessionStore
from agentls.agent.transcript import violations
from agentls.agent.types import Message

WRITER = Path(__file__).with_name("crash_writer.py")
ROOT = Path(__file__).resolve().parents[2]


def load(db: Path) -> list[Message]:
    async def go() -> list[Message]:
        async with SessionStore(db) as store:
            if await store.get_session("crash") is None:
                return []
            return await store.load_messages("crash")

    return asyncio.run(go())


def whole_rounds(messages: list[Message]) -> None:
    parts: dict[str, set[int]] = defaultdict(set)
    sizes: dict[str, int] = {}
    for m in messages:
        meta = m.get("meta") or {}
        parts[meta["round"]].add(meta["part"])
        sizes[meta["round"]] = meta["of"]
    for round_id, seen in parts.items():
        assert seen == set(range(sizes[round_id])), f"round {round_id} is partial: {sorted(seen)}"


def test_kill_9_keeps_every_committed_round(tmp_path: Path) -> None:
    seed = int(os.environ.get("AGENTLS_CRASH_SEED", random.randrange(1 << 30)))
    kills = 150 if os.environ.get("AGENTLS_LONG") else 25
    print(f"crash test seed={seed} kills={kills}")
    rng = random.Random(seed)
    db = tmp_path / "crash.db"
    committed = 0
    for k in range(kills):
        child = subprocess.Popen([sys.executable, str(WRITER), str(db), str(rng.randrange(1 << 30))],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        assert child.stdout is not None
        if k % 5 == 4:
            time.sleep(rng.uniform(0.0, 0.4))  # sometimes during start-up: open, WAL recovery, migration
        else:
            assert child.stdout.readline().strip() == "ready", child.stderr.read() if child.stderr else ""
            time.sleep(rng.uniform(0.0, 0.05))
        child.send_signal(signal.SIGKILL)
        out, err = child.communicate()
        assert child.returncode == -signal.SIGKILL, err
        lines = [ln for ln in out.splitlines() if ln.startswith("committed ")]
        if lines:
            committed = max(committed, int(lines[-1].split()[1]))
        messages = load(db)
        assert len(messages) >= committed, f"seed={seed} kill {k}: {len(messages)} < {committed} committed"
        assert violations(messages) == [], f"seed={seed} kill {k}: {violations(messages)[:3]}"
        whole_rounds(messages)
        committed = len(messages)
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert committed > kills  # the writers did make progress between kills
