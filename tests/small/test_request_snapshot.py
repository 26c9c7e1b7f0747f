"""The requests a turn sends, byte for byte, for the general profile and the small model's (native and json
tool mode): the system prompt, the tool schemas, the grammar, the pre-read and the described edit's rewrite.
A refactoring of how agents are configured must leave every one unchanged (docs/architecture.md, "The model
profile"). To record them again after an intended change: ``AGENTLS_RECORD_SNAPSHOT=1 pytest`` this file."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.scripted import Reply, ScriptedServer, call, text, tools

from .conftest import GREET, AgentFactory

SNAPSHOTS = Path(__file__).parent / "snapshots"
ASK = "Add a docstring to the greet function in greet.py"
DOCSTRING = GREET.replace("def greet(name):\n", 'def greet(name):\n    """Greet someone by name."""\n')


def _j(name: str, **arguments: Any) -> Reply:
    return text(json.dumps({"name": name, "arguments": arguments}))


def _script(case: str) -> list[Reply]:
    if case == "general":
        return [tools(call("read_file", {"path": "greet.py"})),
                tools(call("edit_file", {"path": "greet.py", "old_string": "def greet(name):\n",
                                         "new_string": 'def greet(name):\n    """Greet someone by name."""\n'})),
                text("Added the docstring.")]
    if case == "small":  # the agent makes the first edit (agent/loop/first_edit.py): the model writes its text
        return [text(f"```python\n{DOCSTRING}```"), text("Added the docstring.")]
    # the answer after the agent's own edit is asked plainly, no grammar (agent/loop/plain_answer.py)
    return [text(f"```python\n{DOCSTRING}```"), text("Added the docstring.")]


OPTIONS: dict[str, dict[str, Any]] = {"general": {}, "small": {"small_model": True},
                                      "small-json": {"small_model": True, "tool_mode": "json"}}


@pytest.mark.parametrize("case", list(OPTIONS))
async def test_the_requests_of_a_turn_are_unchanged(case: str, make_agent: AgentFactory, srv: ScriptedServer,
                                                    workspace: Path) -> None:
    srv.push(*_script(case))
    await make_agent(**OPTIONS[case]).run_conversation(ASK)
    assert (workspace / "greet.py").read_text() == DOCSTRING
    bodies = [r.body for r in srv.requests]
    seen = json.dumps(bodies, indent=1, sort_keys=True).replace(str(workspace), "<WORKSPACE>")
    ids: dict[str, str] = {}  # json mode's call ids are random: each becomes its order of appearance
    seen = re.sub(r"call_[0-9a-f]{24}", lambda m: ids.setdefault(m.group(), f"call_{len(ids)}"), seen)
    stored = SNAPSHOTS / f"{case}.json"
    if os.environ.get("AGENTLS_RECORD_SNAPSHOT"):
        stored.write_text(seen + "\n")
    assert seen + "\n" == stored.read_text()
