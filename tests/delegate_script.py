"""A scripted model for delegation tests: replies chosen by conversation, so children running side by side
each get their own script. Shared by the core, ACP and LSP suites."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentls.agent.scripted import RecordedRequest, Reply, text
from agentls.agent.scripted.replies import text_of


def first_user_text(req: RecordedRequest) -> str:
    for m in req.messages:
        if m.get("role") == "user":
            return text_of(m.get("content"))
    return ""


def step_of(req: RecordedRequest) -> int:
    """How many answers of the model the conversation already holds (this request's step in its turn)."""
    return sum(1 for m in req.messages if m.get("role") == "assistant")


def is_child(req: RecordedRequest, goals: Sequence[str]) -> str | None:
    first = first_user_text(req)
    return next((g for g in goals if first.startswith(g)), None)


@dataclass
class Router:
    """``parent``: the delegating conversation's replies by step; ``children``: each goal's replies by step (the
    last one repeats). A grace call gets ``grace``."""

    parent: list[Reply]
    children: dict[str, list[Reply]] = field(default_factory=dict)
    grace: Reply = field(default_factory=lambda: text("grace summary"))

    def __call__(self, req: RecordedRequest) -> Reply:
        if req.headers.get("x-agentls-purpose") == "grace":
            return self.grace
        goal = is_child(req, list(self.children))
        replies = self.children[goal] if goal is not None else self.parent
        return replies[min(step_of(req), len(replies) - 1)]

    def child_requests(self, requests: list[RecordedRequest], goal: str) -> list[RecordedRequest]:
        return [r for r in requests if is_child(r, [goal]) == goal]
