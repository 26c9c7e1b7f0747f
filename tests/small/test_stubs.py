"""A rewrite asked to implement a stub must implement something (agent/tools/stubs.py): the 1.5B model pasted
scrabble-score's instructions into ``score`` as comments and kept its ``pass``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, text
from agentls.agent.tools.stubs import still_stubs, stubs

from .conftest import AgentFactory, results

STUB = "def score(word):\n    pass\n"
COMMENTED = "def score(word):\n    # Sum the letter values.\n    # A is 1 point.\n    pass\n"
DONE = "def score(word):\n    return len(word)\n"
ASK = "Implement the stub in scrabble_score.py so that it satisfies INSTRUCTIONS.md."


@pytest.mark.parametrize(("source", "found"), [
    (STUB, {"score"}),
    ('def f():\n    """Do it."""\n', {"f"}),
    ("def f():\n    ...\n", {"f"}),
    ("def f():\n    raise NotImplementedError('later')\n", {"f"}),
    ("class C:\n    def __init__(self):\n        pass\n\n    def go(self):\n        return 1\n", {"C.__init__"}),
    ("def f():\n    raise ValueError('no')\n", set()),
    (DONE, set()),
])
def test_stub_bodies_are_found(source: str, found: set[str]) -> None:
    assert stubs(source) == found


@pytest.mark.parametrize(("before", "after", "refused"), [
    (STUB, COMMENTED, True),  # comments are no implementation
    (STUB, DONE, False),
    ("def a():\n    pass\n\ndef b():\n    pass\n", "def a():\n    return 1\n\ndef b():\n    pass\n", False),  # some
    ("class C:\n    def __init__(self):\n        pass\n", "class C:\n    def __init__(self):\n        pass\n\n"
     "    def x(self):\n        pass\n", True),
])
def test_a_rewrite_that_leaves_every_stub_a_stub_is_refused(before: str, after: str, refused: bool) -> None:
    why = still_stubs(Path("scrabble_score.py"), before, after, ASK)
    assert (why is not None) == refused, why


def test_only_a_request_to_implement_is_held_to_it() -> None:
    assert still_stubs(Path("s.py"), STUB, COMMENTED, "Add a comment to score in s.py") is None
    assert still_stubs(Path("s.md"), STUB, COMMENTED, ASK) is None


async def test_the_commented_stub_is_refused_and_the_next_rewrite_lands(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "scrabble_score.py").write_text(STUB)
    srv.push(text(f"```python\n{COMMENTED}```"), text(json.dumps({"name": "edit_file", "arguments": {
        "path": "scrabble_score.py", "change": "return the sum of the letter values"}})),
        text(f"```python\n{DONE}```"), text(json.dumps({"name": "final_answer", "arguments": {"text": "Done."}})))
    result = await make_agent(small_model=True, tool_mode="json").run_conversation(ASK)
    assert (workspace / "scrabble_score.py").read_text() == DONE
    refused = next(r for r in results(result) if "implements nothing" in r)
    assert "score is still only `pass`" in refused and "Nothing was changed" in refused
