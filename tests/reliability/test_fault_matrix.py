"""Suite 1: the provider fault matrix (docs/loop.md §4), table-driven from ``faults.CASES``.

Each case runs against the real core (``AIAgent``) and the scripted provider, on both wires, streaming
and not. For each run it asserts the category, the recovery (retry count and backoff bounds,
compression, fallback, or a structured failure), that nothing was raised to the host, and that the
transcript is valid (docs/loop.md §3, and no request refused by the strict provider).
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.agent import AIAgent
from agentls.agent.providers.errors import CATEGORIES
from agentls.agent.scripted import RecordedRequest, ScriptedServer, text
from agentls.agent.transcript import violations

from .faults import CASES, CUT_FILE, Fault, markdown_table, variants

BASE, CAP = 0.05, 0.4  # retry_base_delay, retry_max_delay
SLACK = 0.6  # scheduling noise allowed above an upper bound on a busy 2-core box
ANSWER = "the real answer"
DOC = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
_FAILED_RE = re.compile(r"provider call failed \((\w+), attempt")

_tally: dict[str, int] = {"runs": 0, "handled": 0}


@pytest.fixture(scope="module", autouse=True)
def tally() -> Iterator[None]:
    yield
    print(f"\nfault matrix: {_tally['handled']}/{_tally['runs']} cases handled "
          f"({len(CASES)} faults x stream on/off x 2 wires, {len({f.category for f in CASES})}/12 categories)")


def _purpose(req: RecordedRequest) -> str:
    return req.headers.get("x-agentls-purpose", "turn")


def _turn_requests(srv: ScriptedServer) -> list[RecordedRequest]:
    return [r for r in srv.requests if _purpose(r) == "turn"]


def _gaps(reqs: list[RecordedRequest]) -> list[float]:
    return [b.received_at - a.received_at for a, b in itertools.pairwise(reqs)]


def _big_history(rounds: int = 8, size: int = 6000) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    for i in range(rounds):
        history += [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": f"h{i}", "type": "function", "function": {
                "name": "read_file", "arguments": f'{{"path": "f{i}.txt"}}'}}]},
            {"role": "tool", "tool_call_id": f"h{i}", "content": f"file {i}: " + "data " * (size // 5)},
            {"role": "assistant", "content": f"answer {i}"}]
    return history


def _check_backoff(gaps: list[float], fault: Fault) -> None:
    """``delay = min(base*2^(n-1), cap)`` plus jitter in [0, delay/2]; ``Retry-After`` wins when given."""
    for n, gap in enumerate(gaps, start=1):
        if fault.retry_after is not None:
            low, high = fault.retry_after, fault.retry_after
        else:
            low = min(BASE * 2 ** (n - 1), CAP)
            high = low * 1.5
        low += fault.stalls_for
        high += fault.stalls_for
        assert low <= gap <= high + SLACK, f"retry {n} came after {gap:.3f}s, expected [{low:.3f}, {high:.3f}]"


def _seen_categories(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [m.group(1) for r in caplog.records if (m := _FAILED_RE.search(r.getMessage()))]


@pytest.mark.parametrize(("fault", "wire", "stream"), variants(),
                         ids=[f"{f.id}-{w}-{'stream' if s else 'nostream'}" for f, w, s in variants()])
async def test_fault(fault: Fault, wire: str, stream: bool, srv: ScriptedServer, workspace: Path,
                     caplog: pytest.LogCaptureFixture) -> None:
    _tally["runs"] += 1
    caplog.set_level(logging.INFO, logger="agentls")
    updates: list[dict[str, Any]] = []
    history: list[dict[str, Any]] | None = None
    options: dict[str, Any] = {
        "model": "m", "base_url": srv.openai_url if wire == "openai" else srv.anthropic_url, "provider": wire,
        "api_key": "test-key", "workspace": workspace, "stream": stream, "on_update": updates.append,
        "retry_base_delay": BASE, "retry_max_delay": CAP, "request_timeout": 10.0, "titles": "prompt",
        "approval": "yolo", "max_retries": 3, **fault.options}
    if fault.recovery == "retry":
        srv.push(fault.make(), text(ANSWER))
    elif fault.recovery in ("exhausted", "fail"):
        srv.set_responder(lambda req: fault.make())
    elif fault.recovery == "fallback":
        srv.push(fault.make(), model="m")
        srv.push(text(ANSWER), model="backup")
        options["fallback_models"] = ["backup"]
    elif fault.recovery == "compress":
        turn = [fault.make(), text(ANSWER)]
        srv.set_responder(lambda req: text("Goal: test. Done: much.") if _purpose(req) == "summary" else turn.pop(0))
        options["context_window"] = 32_000
        history = _big_history()
    agent = AIAgent(**options)
    try:
        result = await agent.run_conversation("go on", conversation_history=history)  # never raises
    finally:
        await agent.close()

    # The transcript is valid, and the strict provider accepted every request built from it.
    assert violations(result.messages) == [], violations(result.messages)
    assert not [r.rejected for r in srv.requests if r.rejected], "a request was refused by the provider"
    # Nothing was raised into the host, and nothing crashed inside the loop.
    crashed = [r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info]
    assert not crashed, [r.getMessage() for r in crashed]
    assert fault.category in CATEGORIES
    seen = _seen_categories(caplog)
    assert seen and seen[0] == fault.category, f"classified as {seen}, expected {fault.category}"

    reqs = _turn_requests(srv)
    if fault.recovery in ("exhausted", "fail"):
        assert result.failed is True and result.exit_reason == "failed" and not result.completed
        assert result.error["category"] == fault.category and result.error["message"]
        assert result.final_response is None
        expected = 1 + options["max_retries"] if fault.recovery == "exhausted" else 1
        assert len(reqs) == expected, f"{len(reqs)} attempts, expected {expected}"
        _check_backoff(_gaps(reqs), fault)
        _tally["handled"] += 1
        return
    assert result.completed and not result.failed, result.error
    assert result.final_response == ANSWER
    if fault.recovery == "retry":
        assert len(reqs) == 2, f"{len(reqs)} attempts, expected 2"
        _check_backoff(_gaps(reqs), fault)
        assert [m["content"] for m in result.messages if m["role"] == "assistant"] == [ANSWER]
        assert not (workspace / CUT_FILE).exists(), "a tool call cut mid-stream was executed"
    elif fault.recovery == "fallback":
        assert [r.model for r in reqs] == ["m", "backup"]
    elif fault.recovery == "compress":
        first, second = reqs
        assert len(second.raw) < len(first.raw) * 0.8, "the retry was not smaller than the overflowing call"
        assert [u["status"] for u in updates if u["sessionUpdate"] == "compaction_update"][-1] == "completed"
        assert second.last_user_text == "go on"
    _tally["handled"] += 1


def test_every_category_is_in_the_matrix() -> None:
    assert {f.category for f in CASES} == set(CATEGORIES)


def test_the_docs_table_is_generated_from_the_cases() -> None:
    assert markdown_table() in DOC.read_text(encoding="utf-8"), \
        "docs/reliability.md is stale: paste the output of `python tests/reliability/faults.py`"
