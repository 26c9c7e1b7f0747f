"""How a tool call reaches the world: the ``ToolContext`` it gets, permission prompts, undo checkpoints,
its time limit, and a crash turned into an error result."""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from . import events
from .config import Settings
from .undo import Checkpoints
from .host import Host, PermissionOption, PermissionRequest
from .outcome import OutcomeRecorder
from .permissions import PermissionPolicy, options_for, remembered_key, runs_in_plan_mode, what_it_is
from .plan_mode import refusal as plan_refusal
from .profile import GENERAL, ModelProfile
from .tools.base import Rewrite, Tool, ToolContext, ToolFailure, ToolOutput
from .tools.reads import ReadLedger
from .types import Message
from .updates import UpdateSender

if TYPE_CHECKING:
    from .context.hints import HintTracker
    from .delegate.config import EditTap
    from .sandbox.session import CommandSandbox

log = logging.getLogger("agentls.tools")

PROVIDER_KEY_VARS = frozenset({"AGENTLS_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY",
                               "GEMINI_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY",
                               "DEEPSEEK_API_KEY", "TOGETHER_API_KEY", "XAI_API_KEY"})

OPTIONS = (
    PermissionOption("allow_once", "Allow once", "allow_once"),
    PermissionOption("allow_always", "Always allow", "allow_always"),
    PermissionOption("reject_once", "Reject", "reject_once"),
    PermissionOption("reject_always", "Always reject", "reject_always"),
)


class ToolRunner:
    def __init__(self, *, settings: Settings, host: Host, root: Path, session_id: str, policy: PermissionPolicy,
                 updates: UpdateSender, checkpoints: Checkpoints, context_window: Callable[[], int],
                 sandbox: CommandSandbox | None = None, profile: ModelProfile = GENERAL,
                 tap: EditTap | None = None) -> None:
        self.host = host
        self.root = root
        self.policy = policy
        self.plan: list[dict[str, Any]] = []  # the todo tool's list
        self._session_id = session_id
        self._updates = updates
        self._checkpoints = checkpoints
        self._terminal_timeout = settings.terminal_timeout
        self._output_limit = settings.tool_output_limit
        self._context_window = context_window
        self._api_key = settings.api_key
        self._sandbox = sandbox
        self._profile = profile
        self._tap = tap  # a subagent: its edits are checkpointed in its parent's turn (agent/delegate/config.py)
        self._hints: HintTracker | None = None
        self._secret_env: tuple[str, ...] | None = None  # read once per turn
        self._edited: list[Path] = []  # the files this turn's edits changed (the diagnostics tool reads it)
        self.reads = ReadLedger()  # read before overwrite, for the session (agent/tools/reads.py)
        self._outcome = OutcomeRecorder()  # what the current turn really did (agent/outcome.py)
        self.on_mode: Callable[[str], None] | None = None  # switches the session's mode (exit_plan)
        # A user-level skill's files, which read_file may read outside the workspace (agent/workflows)
        self.read_outside: Callable[[object], Awaitable[str | None]] | None = None

    def open(self, messages: Iterable[Message]) -> None:
        """Subdirectory hints already shown in a resumed transcript are not shown again."""
        from .context.hints import HintTracker

        self._hints = HintTracker(self.root)
        self._hints.seed_from(messages)

    def start_turn(self, outcome: OutcomeRecorder) -> None:
        self._secret_env = None
        self._edited = []
        self._outcome = outcome

    @property
    def output_limit(self) -> int:
        """Chars of one tool result the model sees: as configured, else about a quarter of the context window."""
        return self._output_limit or min(50_000, self._context_window())

    async def hints_for(self, paths: Iterable[Path]) -> str | None:
        """The project instructions (``AGENTS.md``) near ``paths`` the model has not seen yet."""
        assert self._hints is not None, "ToolRunner.open() comes first"
        return await self._hints.hints_for(paths)

    def context(self, tool_call_id: str, task_id: str | None, rewrite: Rewrite | None = None,
                request: str = "", approved: bool = False) -> ToolContext:
        outcome = self._outcome

        async def ask(title: str, action: str, raw_input: dict[str, Any], key: str, dangerous: bool,
                      content: list[dict[str, Any]]) -> str | None:
            if approved:  # a PreToolUse hook allowed this call (agent/workflows/hooks.py)
                return None
            refusal = await self.ask_permission(tool_call_id, title, action, raw_input, key, dangerous, content)
            if refusal:
                outcome.refusal(action, title, refusal, self.policy.mode)
            return refusal

        tap = self._tap

        async def checkpoint(path: Path, previous: str | None) -> None:
            outcome.before_change(path, previous)
            await (tap.checkpoint(path, previous) if tap else self._checkpoints.save(path, previous))

        def changed(path: Path, content: str | None) -> None:
            outcome.after_change(path, content)
            if tap is None:
                self._checkpoints.note_after(path, content)
            elif tap.changed:  # the parent's turn records it (its outcome, its checkpoint's after-state)
                tap.changed(path, content)

        def set_plan(entries: list[dict[str, Any]]) -> None:
            self.plan = entries

        return ToolContext(host=self.host, root=self.root, session_id=self._session_id, task_id=task_id,
                           tool_call_id=tool_call_id, settings_terminal_timeout=self._terminal_timeout,
                           output_limit=self.output_limit, ask_permission=ask, checkpoint=checkpoint,
                           send_update=self._updates.send, set_plan=set_plan, secret_env=self.secret_env(),
                           sandbox=self._sandbox, edited=self._edited, reads=self.reads,
                           changed=changed, profile=self._profile, rewrite=rewrite,
                           request=request, set_mode=self.on_mode,
                           read_outside=self.read_outside, mode=lambda: self.policy.mode)

    async def run(self, tool: Tool, args: dict[str, Any], tool_call_id: str, task_id: str | None,
                  rewrite: Rewrite | None = None, request: str = "", approved: bool = False) -> ToolOutput:
        """The tool's output; a failure, a crash or its time limit is an error output, never an exception
        (cancellation aside). ``approved``: no permission prompt (a hook allowed the call)."""
        if self.policy.mode == "plan" and not runs_in_plan_mode(tool):
            text = plan_refusal(tool.name)
            self._outcome.refusal("edit" if tool.kind == "edit" else "execute", tool.title(args) or tool.name, text,
                                  "plan")
            return ToolOutput(text, is_error=True)
        ctx = self.context(tool_call_id, task_id, rewrite, request, approved)
        # An edit said in words waits on the model call that writes it (agent/loop/rewrite.py), which has the
        # provider's own time limits and may take minutes on a slow CPU: the tool's limit does not cut it.
        limit = None if rewrite is not None and "change" in args else tool.timeout
        try:
            if limit is None:
                return await tool.run(ctx, args)
            out: ToolOutput | None = None
            with anyio.move_on_after(limit):
                out = await tool.run(ctx, args)
            return out or ToolOutput(f"error: {tool.name} timed out after {tool.timeout:g}s and was stopped", True)
        except ToolFailure as exc:
            return ToolOutput(f"error: {exc}", is_error=True)
        except Exception as exc:  # a crashed tool is an error result; the loop goes on
            log.exception("tool %s crashed", tool.name)
            return ToolOutput(f"error: {tool.name} failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True)

    def secret_env(self) -> tuple[str, ...]:
        """The provider-key variables (and any variable holding this agent's key), read once per turn: a
        command the model runs, like ``env``, would otherwise put the key in the transcript and the requests."""
        if self._secret_env is None:
            key = self._api_key
            names = {n for n, v in os.environ.items() if n in PROVIDER_KEY_VARS or (key and v == key)}
            self._secret_env = tuple(sorted(names))
        return self._secret_env

    async def ask_permission(self, tool_call_id: str, title: str, action: str, raw_input: dict[str, Any],
                             key: str, dangerous: bool, content: list[dict[str, Any]] | None = None) -> str | None:
        """None when the action may go ahead, else the refusal as the model should read it."""
        what = what_it_is(action)
        outside = action == "unsandboxed"  # a rerun outside the OS sandbox, after it denied the command
        decision = self.policy.decide(action, key, dangerous)
        if decision == "allow":
            return None
        if decision == "deny":
            return f"error: the user has refused this {what} for the rest of the session (they chose 'always reject')"
        options = options_for(key, dangerous, OPTIONS)
        request = PermissionRequest(tool_call_id=tool_call_id, title=title, kind="execute" if outside else action,
                                    raw_input=raw_input, options=options, content=tuple(content or ()))
        await self._updates.send(events.tool_call_update(tool_call_id, status="pending",
                                                         content=list(content or ()) or None))
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
                    f"is '{self.policy.mode}'; the user can allow it with approval 'auto-edit' (edits) or 'yolo'. "
                    f"The {what} did NOT run, so there is no result: do not guess one. Tell the user it was not run "
                    "and why.")
        if answer.cancelled:
            return f"error: the permission request for this {what} was cancelled; it did not run" + \
                (" again outside the sandbox" if outside else "")
        kind = next((o.kind for o in options if o.option_id == answer.option_id), None)
        if kind is None:
            return f"error: the client answered with an unknown option {answer.option_id!r}; the {what} did not run"
        self.policy.remember(remembered_key(key, answer.option_id), kind, dangerous)
        await self._updates.send(events.tool_call_update(tool_call_id, status="in_progress"))
        if kind.startswith("allow"):
            return None
        if outside:
            return "error: the user declined to run it outside the sandbox; it was not run again"
        return f"error: the user rejected this {what}"
