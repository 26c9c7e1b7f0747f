"""What a child takes from its parent, and the one place that decides whether an agent is offered ``delegate_task``
(docs/loop.md §9.9)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..permissions import PermissionPolicy

if TYPE_CHECKING:
    from ..config import Settings
    from ..profile import ModelProfile

MAX_DEPTH = 2


def offers_delegation(settings: Settings, profile: ModelProfile, level: int) -> bool:
    """Whether an agent at ``level`` (0: a session the user started) gets ``delegate_task``: not beyond
    ``delegate_depth``, and a model whose profile says no (the small model) only when
    ``delegate_small_model`` says so."""
    if level >= min(settings.delegate_depth, MAX_DEPTH):
        return False
    return profile.delegate or settings.delegate_small_model


@dataclass(frozen=True)
class EditTap:
    """A child's edits also recorded in its parent's turn: the undo checkpoint (so the parent's undo of the turn
    restores them) and the outcome record (so the parent's footer counts them)."""

    checkpoint: Callable[[Path, str | None], Awaitable[None]]
    changed: Callable[[Path, str | None], None] | None


@dataclass(frozen=True)
class ParentLink:
    """What a child agent takes from the agent that delegated to it, besides its configuration."""

    session_id: str  # the parent's session (the child's row points at it)
    tool_call_id: str  # the parent's delegate_task call
    level: int  # the child's depth: 1 for a child of a top-level session
    policy: PermissionPolicy  # the parent's, shared: "always allow" answered to a child holds for all
    tap: EditTap
