"""A session another agentls process is running a turn of: what both faces say (docs/sessions.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentls.agent.sessions.lease import LeaseHolder, SessionBusy


def running_elsewhere(holder: LeaseHolder) -> dict[str, Any]:
    """``runningElsewhere`` of a loaded session: the holder and the sentence for the user."""
    return {**holder.to_json(), "message": (
        f"this session is running a turn in another agentls process ({holder.describe()}); what is shown is "
        "what it has saved so far, and a turn here is refused until that turn ends")}


def busy_data(exc: SessionBusy) -> dict[str, Any]:
    """The error data of a refused turn: ``sessionBusy``, the holder, and the steers it had accepted (never
    delivered) as ``pendingSteer``."""
    data: dict[str, Any] = {"reason": "sessionBusy", "runningElsewhere": exc.holder.to_json()}
    if exc.pending_steer:
        data["pendingSteer"] = exc.pending_steer
    return data
