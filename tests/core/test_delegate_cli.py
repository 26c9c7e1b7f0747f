"""``agentls run`` with a subagent (docs/loop.md §9.9): its steps indented under the delegate call, and
``--json`` listing what it did. Real subprocesses on both sides."""

from __future__ import annotations

import json
from pathlib import Path

from .test_cli import _finish, _script, agentls, provider


async def test_run_shows_a_childs_steps_indented_and_json_lists_it(tmp_path: Path, workspace: Path) -> None:
    script = _script(tmp_path, [
        {"tool_calls": [{"name": "delegate_task", "arguments": {"goal": "Find the helper"}}]},
        {"tool_calls": [{"name": "search_files", "arguments": {"pattern": "def helper"}}]},
        {"content": "helper is in src/util.py"},
        {"content": "The subagent found it in src/util.py."}])
    async with provider(tmp_path, "--script", script) as urls:
        proc = await agentls(tmp_path, "run", "-w", str(workspace), "--base-url", urls["openai_url"], "-m", "m",
                             "--json", "where is helper?")
        code, out, err = await _finish(proc)
    assert code == 0, err
    lines = err.splitlines()
    parent = next(i for i, line in enumerate(lines) if line.startswith("  → Delegate: Find the helper"))
    child = next(i for i, line in enumerate(lines) if line.startswith("      → "))
    assert parent < child and "def helper" in lines[child]
    assert any(line.startswith("      ✓ ") for line in lines)
    result = json.loads(out)
    assert result["final_response"] == "The subagent found it in src/util.py."
    [child_record] = result["children"]
    assert child_record["exitReason"] == "text_response" and child_record["answer"] == "helper is in src/util.py"
    assert child_record["goal"] == "Find the helper" and child_record["toolCalls"] == 1
