"""The README question with the real model in a never-seen workspace (``-m localmodel``; agent/local/slots.py):
a new workspace's first run restores another workspace's saved slot, so the static part of the system prompt
and the tool schemas come from the cache. Judged by llama.cpp's own count of cached prompt tokens, not by time.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from .conftest import ROOT, needs_local_model

pytestmark = needs_local_model


async def _ask(workspace: Path, cache: Path, data: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("AGENTLS_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update(AGENTLS_CACHE_DIR=str(cache), AGENTLS_DATA_DIR=str(data), AGENTLS_CONFIG=str(data / "none.toml"))
    with anyio.fail_after(600):
        proc = await anyio.run_process([sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--json",
                                        "--no-persist", "What does README.md say?"], env=env, check=False)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _linked_cache(cache: Path) -> Path:
    from agentls.agent.local.model import cache_dir

    (cache / "models").mkdir(parents=True)  # saved slots start empty; the model and its stamp are linked
    for f in cache_dir().iterdir():
        if f.is_file() and f.name.endswith((".gguf", ".verified.json")):
            (cache / "models" / f.name).symlink_to(f)
    return cache


@pytest.mark.timeout(900)  # three runs of the real model: prime, a turn, prime again
async def test_after_agentls_model_prime_the_first_turn_in_a_workspace_starts_from_the_static_prompt(
        tmp_path: Path) -> None:
    cache = _linked_cache(tmp_path / "cache")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("AGENTLS_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update(AGENTLS_CACHE_DIR=str(cache), AGENTLS_DATA_DIR=str(tmp_path / "data"))
    with anyio.fail_after(600):
        primed = await anyio.run_process([sys.executable, "-m", "agentls.server", "model", "prime"], env=env,
                                         check=False)
    assert primed.returncode == 0 and b"primed the prompt cache" in primed.stderr, primed.stderr[-2000:]
    assert len(list((cache / "models" / "slots").glob("*-*.bin"))) == 1
    ws = tmp_path / "w" / "hello"
    shutil.copytree(ROOT / "examples" / "hello", ws)
    first = await _ask(ws, cache, tmp_path / "data")
    assert first["usage"]["cached_tokens"] >= 500, first["usage"]  # the static part and the tools
    with anyio.fail_after(600):
        again = await anyio.run_process([sys.executable, "-m", "agentls.server", "model", "prime"], env=env,
                                        check=False)
    assert again.returncode == 0 and b"already primed" in again.stderr, again.stderr[-2000:]


async def test_a_never_seen_workspace_starts_from_another_workspaces_saved_prompt(tmp_path: Path) -> None:
    cache = _linked_cache(tmp_path / "cache")
    first, second = tmp_path / "a" / "hello", tmp_path / "b" / "hello"
    for ws, note in ((first, "todo-a.md"), (second, "todo-b.md")):
        shutil.copytree(ROOT / "examples" / "hello", ws)
        (ws / note).write_text("notes\n")  # another listing: another system prompt
    cold = await _ask(first, cache, tmp_path / "data")
    assert len(list((cache / "models" / "slots").glob("*-*.bin"))) == 1  # saved after the first step
    new = await _ask(second, cache, tmp_path / "data")
    for result in (cold, new):
        answer = (result["final_response"] or "").lower()
        assert "readme" in answer or "hello" in answer or "greet" in answer, result["final_response"]
    # The new workspace's first step reused the static part and the tools (about 750 tokens) from the slot.
    assert new["usage"]["cached_tokens"] >= cold["usage"]["cached_tokens"] + 500, (cold["usage"], new["usage"])
