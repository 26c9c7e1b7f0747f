"""The registry of a kept local model server is trusted only when it is ours (agent/local/keeper.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentls.agent.local import keeper


@pytest.mark.parametrize("payload", [
    "not json", "[]", json.dumps({"url": "http://127.0.0.1:9/v1", "pid": 999_999_999, "model_id": "m"}),  # gone
    json.dumps({"url": "http://10.0.0.1:80/v1", "pid": os.getpid(), "model_id": "m"}),  # off this machine
    json.dumps({"url": "http://127.0.0.1.evil.example/v1", "pid": os.getpid(), "model_id": "m"}),
    json.dumps({"url": "http://127.0.0.1:9/v1", "pid": 1, "model_id": "m"}),
    json.dumps({"url": "http://127.0.0.1:9/v1", "pid": os.getpid(), "model_id": "another model"}),
    json.dumps({"url": "http://127.0.0.1:9/v1", "pid": "12", "model_id": "m"}),
])
def test_a_registry_that_is_not_a_live_server_of_ours_is_no_server(tmp_path: Path, payload: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(payload)
    assert keeper.read_registry(path, "m") is None


def test_a_live_registry_is_read(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    keeper.write_registry(path, {"url": "http://127.0.0.1:9/v1", "pid": os.getpid(), "model_id": "m"})
    assert keeper.read_registry(path, "m") == {"url": "http://127.0.0.1:9/v1", "pid": os.getpid(), "model_id": "m"}
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_held_lease_is_never_idle_and_a_dead_holder_drops_it(tmp_path: Path) -> None:
    lease = tmp_path / "servers" / "x.lease"
    f = keeper.hold_shared(lease)
    os.utime(lease, (time.time() - 100, time.time() - 100))
    assert not keeper.idle_long_enough(lease, 10)  # held: in use, however old
    keeper.let_go(f, lease)
    assert not keeper.idle_long_enough(lease, 10)  # let go just now: the idle time counts from here
    # another process holds it and dies without letting go: its hold goes with it
    code = (f"import sys, time; sys.path.insert(0, {str(Path(__file__).parents[2].parent)!r}); "
            f"from agentls.agent.local import keeper; h = keeper.hold_shared(__import__('pathlib').Path({str(lease)!r})); "
            "print('held', flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "held\n"
    os.utime(lease, (time.time() - 100, time.time() - 100))
    assert not keeper.idle_long_enough(lease, 10)
    child.kill()
    child.wait()
    assert keeper.idle_long_enough(lease, 10)
    keeper._kept.pop().close()
