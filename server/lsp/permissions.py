"""Asking the user: ``agent/requestPermission`` when declared, else ``window/showMessageRequest``, else
nobody (None: the core applies the ``approval`` policy).

An unanswered prompt times out (``permissionTimeout``, 300 s by default) and counts as cancelled: the
action does not run, and the user is told why with ``window/showMessage``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

from agentls.agent.host import PermissionDecision, PermissionRequest
from ..runtime.permission_call import permission_tool_call

if TYPE_CHECKING:
    from .server import AgentServer

log = logging.getLogger("agentls.lsp.permissions")

CANCELLED = PermissionDecision("cancelled")


def request_params(session_id: str, request: PermissionRequest, root: Path) -> dict[str, Any]:
    return {
        "sessionId": session_id,
        "toolCall": permission_tool_call(request, root),
        "options": [{"optionId": o.option_id, "name": o.name, "kind": o.kind} for o in request.options],
    }


def decision_from(answer: Any, request: PermissionRequest) -> PermissionDecision:
    """The ACP ``RequestPermissionResponse`` shape; anything else counts as cancelled."""
    outcome = answer.get("outcome") if isinstance(answer, dict) else None
    if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
        option_id = outcome.get("optionId")
        if any(o.option_id == option_id for o in request.options):
            return PermissionDecision(str(option_id))
    if not (isinstance(outcome, dict) and outcome.get("outcome") == "cancelled"):
        log.warning("unusable permission answer %r; treated as cancelled", answer)
    return CANCELLED


def _prompt(request: PermissionRequest) -> str:
    verb = {"execute": "run a command", "edit": "edit a file"}.get(request.kind, "call a tool")
    danger = request.raw_input.get("danger")
    warning = f" Warning: {danger}." if isinstance(danger, str) else ""
    return f"agentls wants to {verb}: {request.title}.{warning}"


async def ask_permission(ls: AgentServer, session_id: str, request: PermissionRequest, root: Path
                         ) -> PermissionDecision | None:
    timeout = ls.options.permission_timeout
    try:
        if ls.features.permissions:
            try:
                answer = await ls.call("agent/requestPermission", request_params(session_id, request, root), timeout)
                return decision_from(answer, request)
            except JsonRpcMethodNotFound:
                log.warning("the client declared permissions but has no agent/requestPermission handler")
        if ls.features.show_message_request:
            return await _ask_with_message(ls, request, timeout)
    except TimeoutError:
        ls.show(types.MessageType.Warning, f"agentls: nobody answered the permission request for "
                                           f"'{request.title}' in {timeout:g} s; it was treated as cancelled")
        return CANCELLED
    except JsonRpcException as exc:
        log.warning("the permission request failed (%s); treated as cancelled", exc.message)
        return CANCELLED
    return None


async def _ask_with_message(ls: AgentServer, request: PermissionRequest, timeout: float
                            ) -> PermissionDecision | None:
    params = types.ShowMessageRequestParams(
        type=types.MessageType.Warning if request.raw_input.get("danger") else types.MessageType.Info,
        message=_prompt(request), actions=[types.MessageActionItem(title=o.name) for o in request.options])
    try:
        chosen = await ls.call(types.WINDOW_SHOW_MESSAGE_REQUEST, params, timeout)
    except JsonRpcMethodNotFound:
        return None
    title = getattr(chosen, "title", None)
    for option in request.options:
        if option.name == title:
            return PermissionDecision(option.option_id)
    return CANCELLED
