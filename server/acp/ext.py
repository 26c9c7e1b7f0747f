"""Extension methods: ``_session/steering``, ``_agentls/cancel`` (also as its old name ``_agentls/interrupt``),
``_agentls/compress`` and ``_agentls/listMcpServers`` (docs/acp.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp import RequestError

from . import lifecycle, turns
from .capabilities import STEERING_METHOD
from .errors import invalid_params

if TYPE_CHECKING:
    from .lifecycle import AcpFace
    from ..runtime.live import LiveSession
    from ..runtime.registry import SessionRegistry

CANCEL_METHOD = "agentls/cancel"  # what session/cancel does: the running prompt and the queued ones end
OLD_CANCEL_METHOD = "agentls/interrupt"  # its first name, kept for the clients that use it
COMPRESS_METHOD = "agentls/compress"
MCP_METHOD = "agentls/listMcpServers"


def _session_id(params: dict[str, Any]) -> str:
    sid = params.get("sessionId")
    if not isinstance(sid, str) or not sid:
        raise invalid_params("sessionId (a string) is required")
    return sid


def prompt_text(prompt: Any) -> str | None:
    """A steer's text: a string, or the text of ACP content blocks."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list) and all(isinstance(b, dict) for b in prompt):
        return "\n\n".join(str(b.get("text", "")) for b in prompt if b.get("type") == "text")
    return None


def _optional(params: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = params.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool) and kind is int):
        raise invalid_params(f"{key} must be a {getattr(kind, '__name__', kind)}")
    return value


async def steering(face: AcpFace, sessions: SessionRegistry, params: dict[str, Any]) -> dict[str, Any]:
    text = prompt_text(params.get("prompt"))
    if text is None:
        raise invalid_params("prompt must be a string or a list of content blocks")
    session = sessions.find(_session_id(params))
    if session is None:
        return {"outcome": "failed", "reason": "unknown session"}
    meta = params.get("_meta")
    idle = ((meta or {}).get("steering") or {}).get("idleBehavior") if isinstance(meta, dict) else None
    outcome = await turns.steer(sessions, session, face.sink(session.session_id), text,
                                idle if isinstance(idle, str) else None)
    if outcome == "promptRequired":
        return {"outcome": outcome, "reason": "noRunningTurn"}
    return {"outcome": outcome}


async def compress(sessions: SessionRegistry, session: LiveSession, params: dict[str, Any]) -> dict[str, Any]:
    agent = await lifecycle.agent(sessions, session)
    keep_last = _optional(params, "keepLast", int)
    report = await agent.compress(focus=_optional(params, "focus", str), keep_last=keep_last,
                                  preview=bool(_optional(params, "preview", bool)),
                                  aggressive=bool(_optional(params, "aggressive", bool)))
    return dict(report)


async def dispatch(face: AcpFace, sessions: SessionRegistry, method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == STEERING_METHOD:
        return await steering(face, sessions, params)
    if method not in (CANCEL_METHOD, OLD_CANCEL_METHOD, COMPRESS_METHOD, MCP_METHOD):
        raise RequestError(-32601, f"Method not found: _{method} is not an agentls extension (agentls has "
                                   f"_{STEERING_METHOD}, _{CANCEL_METHOD}, _{COMPRESS_METHOD} and _{MCP_METHOD})",
                           {"method": f"_{method}"})
    session = sessions.find(_session_id(params))
    if session is None:
        raise invalid_params(f"unknown session {params['sessionId']!r}")
    if method in (CANCEL_METHOD, OLD_CANCEL_METHOD):
        return {"cancelled": (cancelled := session.cancel()), "interrupted": cancelled}
    if method == MCP_METHOD:
        from agentls.agent.mcp.report import listing

        return listing(session.mcp)
    return await compress(sessions, session, params)
