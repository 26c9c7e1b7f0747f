"""Time to answer ``initialize`` from process start: the target is 0.55 s (half of Hermes Agent's adapter)."""

from __future__ import annotations

import statistics

from acp_harness.startup import AGENTLS, INITIALIZE, time_to_answers


def test_initialize_is_answered_fast() -> None:
    times = [time_to_answers([AGENTLS, "acp"], [INITIALIZE])[0] for _ in range(5)]
    assert statistics.median(times) < 0.55, times
