"""How tools reach the agent: permissions, checkpoints, updates (a mixin of ``AIAgent``)."""

from __future__ import annotations

import os

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.agent import events
from agentls.agent.host import PermissionOption, PermissionRequest
from agentls.agent.loop.state import TurnState
from agentls.agent.tools.base import ToolContext

if TYPE_CHECKING:
    from agentls.agent.host import Host
    from agentls.agent.permissions import PermissionPolicy
    from agentls.agent.sandbox.session import CommandSandbox
    from agentls.agent.types import SessionUpdate

PROVIDER_KEY_VARS = frozenset({"AGENTLS_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY",
                               "GEMINI_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY",
                               "DEEPSEEK_API_KEY", "TOGETHER_API_KEY", "XAI_API_KEY"})

OPTIONS = (
    PermissionOption("allow_once", "Allow once", "allow_once"),
    PermissionOption("allow_always", "Always allow", "allow_always"),
    PermissionOption("reject_once", "Reject", "reject_once"),
    PermissionOption("reject_always", "Always reject", "reject_always"),
)


class ToolOps:
    host: Host
    root: Path
    session_id: str
    policy: PermissionPolicy
    sandbox: CommandSandbox
    plan: list[dict[str, Any]]
    terminal_timeout: float
    _api_key: str | None

    @property
    def tool_output_limit(self) -> int:
        raise NotImplementedError

    async def _emit(self, update: SessionUpdate) -> None:
        raise NotImplementedError

    async def _checkpoint(self, path: Path, previous: str | None) -> None:
        raise NotImplementedError

    def _tool_context(self, tool_call_id: str, turn: TurnState) -> ToolContext:
        async def ask(title: str, action: str, raw_input: dict[str, Any], key: str, dangerous: bool,
                      content: list[dict[str, Any]]) -> str | None:
            return await self._ask_permission(tool_call_id, title, action, raw_input, key, dangerous, content)

        def set_plan(entries: list[dict[str, Any]]) -> None:
            self.plan = entries

        return ToolContext(host=self.host, root=self.root, session_id=self.session_id, task_id=turn.task_id,
                           tool_call_id=tool_call_id, settings_terminal_timeout=self.terminal_timeout,
                           output_limit=self.tool_output_limit, ask_permission=ask, checkpoint=self._checkpoint,
                           send_update=self._emit, set_plan=set_plan, secret_env=self._secret_env(),
                           sandbox=self.sandbox)

    def _secret_env(self) -> tuple[str, ...]:
        """The provider-key variables (and any variable holding this agent's key): a command the model
        runs, like ``env``, would otherwise put the key in the transcript and the model's requests."""
        key = self._api_key
        names = {n for n in os.environ if n in PROVIDER_KEY_VARS or (key and os.environ.get(n) == key)}
        return tuple(sorted(names))

    async def _ask_permission(self, tool_call_id: str, title: str, action: str, raw_input: dict[str, Any],
                              key: str, dangerous: bool, content: list[dict[str, Any]] | None = None) -> str | None:
        """None when the action may go ahead, else the refusal as the model should read it."""
        what = "edit" if action == "edit" else "command"
        outside = action == "unsandboxed"  # a rerun outside the OS sandbox, after it denied the command
        decision = self.policy.decide(action, key, dangerous)
        if decision == "allow":
            return None
        if decision == "deny":
            return f"error: the user has refused this {what} for the rest of the session (they chose 'always reject')"
        options = tuple(o for o in OPTIONS if not (dangerous and o.kind == "allow_always"))
        request = PermissionRequest(tool_call_id=tool_call_id, title=title, kind="execute" if outside else action,
                                    raw_input=raw_input,
                                    options=options, content=tuple(content or ()))
        await self._emit(events.tool_call_update(tool_call_id, status="pending", content=list(content or ()) or None))
        answer = await self.host.request_permission(request)
        if answer is None:
            if self.policy.unattended(action, dangerous) == "allow":
                return None
            if outside:
                return ("error: running it outside the sandbox needs the user's approval, and this client cannot "
                        "ask; it was not run again. The user can loosen the sandbox instead (sandbox_network = "
                        "\"on\", sandbox_writable, or sandbox = \"off\").")
            why = f" ({raw_input['danger']})" if dangerous and "danger" in raw_input else ""
            return (f"error: this {what} needs the user's approval{why}, and this client cannot ask. The approval mode "
                    f"is '{self.policy.mode}'; the user can allow it with approval 'auto-edit' (edits) or 'yolo'.")
        if answer.cancelled:
            return f"error: the permission request for this {what} was cancelled; it did not run" + \
                (" again outside the sandbox" if outside else "")
        kind = next((o.kind for o in options if o.option_id == answer.option_id), None)
        if kind is None:
            return f"error: the client answered with an unknown option {answer.option_id!r}; the {what} did not run"
        self.policy.remember(key, kind, dangerous)
        await self._emit(events.tool_call_update(tool_call_id, status="in_progress"))
        if kind.startswith("allow"):
            return None
        if outside:
            return "error: the user declined to run it outside the sandbox; it was not run again"
        return "error: the user rejected this edit" if action == "edit" else "error: the user rejected this command"
