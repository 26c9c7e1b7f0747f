"""Per-turn state the phases share."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .change_request import ChangeRequest
from ..model_caller import CallState
from ..outcome import LoopGuard, OutcomeRecorder
from ..types import Message


@dataclass
class TestsChecked:
    """A small model's change checked against its tests this turn (loop/test_check.py)."""
    runs: int = 0
    checked: str | None = None  # the target's text at the last run
    failing: str | None = None  # "acronym_test.py (3 of 9 tests failed)" after a failing last run
    passed: bool = False  # the last run passed (a run whose output said nothing is neither)
    summarized: bool = False  # a run of this turn printed a summary the agent could read
    fresh: int = 0  # fresh attempts from the stub this turn (loop/fresh_attempt.py)
    best: tuple[int, int, str, str] | None = None  # the failing run that passed most: (passed, -failed, text, failing)

    def failing_summary(self) -> str | None:
        """Of ``failing``, what the run said ("3 of 9 tests failed", "timed out"); None when it did not fail."""
        return self.failing.partition(" (")[2].removesuffix(")") if self.failing is not None else None


@dataclass
class TurnState:
    task_id: str | None
    runtime_context: str | None = None
    # (the stored user message, its copy with the runtime context): built again when a rewrite of the transcript
    # (a compression) put another message at the turn's user index (``Conversation.turn_user``)
    user_copy: tuple[Message, Message] | None = None
    iterations: int = 0  # model calls this turn, against the agent's own max_iterations
    calls: CallState = field(default_factory=CallState)  # fallback, api calls, usage
    nudged: bool = False
    empty_retries: int = 0
    continuations: int = 0
    stop_continues: int = 0  # times a Stop hook sent the model back to work (agent/workflows)
    cleanup_errors: list[str] = field(default_factory=list)
    outcome: OutcomeRecorder = field(default_factory=OutcomeRecorder)  # what the turn really did
    guard: LoopGuard = field(default_factory=LoopGuard)  # repeated identical calls stop tool use
    named_files: tuple[Path, ...] = ()  # a small model's request: the workspace files it names (loop/preread.py)
    changes_only: bool = False  # ... and it names no other file and asks to create nothing
    change: ChangeRequest | None = None  # a small model's request that asks for a change (loop/change_request.py)
    change_targets: tuple[str, ...] = ()  # ... the workspace files it asks to change
    target_tests: str | None = None  # ... the test file of its one target (loop/preread.py find_tests)
    tests: TestsChecked = field(default_factory=lambda: TestsChecked())  # ... run after an edit of it landed
    change_nudged: bool = False  # ... the one nudge after an answer with no edit attempted was given
