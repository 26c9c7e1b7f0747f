"""``AIAgent``: one agent session, a façade over its parts (docs/architecture.md, "The agent's parts")."""

from __future__ import annotations

import anyio

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from . import events
from .budget import IterationBudget
from .undo import Checkpoints
from .compactor import AFTER_TURN, Compactor
from .conversation import Conversation
from .delegate.config import ParentLink, offers_delegation
from .disk_host import DiskHost, UpdateCallback
from .config import KEYWORD_DEFAULTS, Settings, with_keywords
from .endpoints import Endpoints
from .host import Host
from .loop.parts import TurnParts
from .loop.turn import TurnRequest, run_turn
from .model_caller import ModelCaller
from .paths import Workspace
from .permissions import PermissionPolicy
from .profile import ModelProfile
from .prompt_blocks import host_reader, prompt_content
from .result import TurnResult
from .rewind import RewindResult, rewind
from .sandbox.policy import config_from
from .sandbox.session import CommandSandbox, outside_key
from .titles import Titles
from .tool_runner import ToolRunner
from .tool_views import ToolViews
from .tools.base import Tool
from .tools.registry import BUILTIN_TOOLS, ToolRegistry
from .turn_control import TurnControl
from .types import Message
from .updates import UpdateSender

if TYPE_CHECKING:
    from .sessions.store import SessionStore
    from .workflows import Workflows

log = logging.getLogger("agentls.agent")


class AIAgent:
    """One agent session. Construction stores configuration only; setup happens on first use.

    ``settings`` is the whole configuration (agent/config.py); beside it only the runtime objects that are not
    settings. The keyword arguments that name settings (``model=``, ``max_retries=``...) are a convenience:
    they are applied to ``settings`` (default ``KEYWORD_DEFAULTS``). A child agent (docs/architecture.md):
    ``AIAgent(settings=parent.settings.evolve(...), host=parent.host, workspace=parent.root)``."""

    def __init__(
        self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
        provider: str | None = None, max_iterations: int | None = None, fallback_models: Sequence[Any] | None = None,
        session_db: str | Path | SessionStore | None = None, workspace: str | Path = ".", host: Host | None = None,
        *, settings: Settings | None = None, session_id: str | None = None,
        iteration_budget: IterationBudget | None = None, tools: Sequence[Tool] | None = None,
        on_update: UpdateCallback | None = None, http_client: httpx.AsyncClient | None = None,
        local_progress: Any = None, parent: ParentLink | None = None,
        workflows: Workflows | None = None, control: TurnControl | None = None, **options: Any,
    ) -> None:
        given = {"model": model, "base_url": base_url, "api_key": api_key, "provider": provider,
                 "max_iterations": max_iterations, "fallback_models": fallback_models}
        options.update((k, v) for k, v in given.items() if v is not None)
        self.settings = s = with_keywords(KEYWORD_DEFAULTS if settings is None else settings, options)
        self.profile = profile = ModelProfile.of(s)
        self.session_id = session_id or uuid.uuid4().hex
        self.root = Workspace(Path(workspace).resolve())  # extra roots: set_extra_roots
        self.host: Host = host if host is not None else DiskHost(self.root, on_update)
        # A subagent shares its parent's policy: "always allow" answered to a child holds for the session.
        self.policy = parent.policy if parent else PermissionPolicy(s.approval, allow_dangerous=s.allow_dangerous)
        self.sandbox = CommandSandbox(config_from(s.sandbox, s.sandbox_network, s.sandbox_writable), self.root,
                                      self._may_run_outside)
        self.registry = ToolRegistry(tools if tools is not None else BUILTIN_TOOLS)
        self.level = parent.level if parent else 0  # 0: a session the user started; n: a subagent n deep
        if (tools is None or parent is not None) and offers_delegation(s, profile, self.level):
            from .delegate.tool import delegate_tool

            self.registry.add(delegate_tool(self))
        self.budget = iteration_budget or IterationBudget(s.max_iterations)
        # A host *and* a callback: updates go to both.
        updates = UpdateSender(self.host, on_update if host is not None else None)
        self._endpoints = Endpoints(s, http_client, local_progress)
        caller = ModelCaller(self._endpoints, updates, s, profile)
        conversation = Conversation(self.session_id, self.root, session_db, system_message=s.system_message,
                                    model=lambda: self._endpoints.model,
                                    origin=(parent.session_id, parent.tool_call_id) if parent else None)
        self._checkpoints = Checkpoints(conversation)
        compactor = Compactor(conversation, caller, updates, self.registry, s.compression_threshold,
                              use_model=profile.model_summaries or bool(s.aux_model))
        caller.context_used = compactor.pressure
        self._parts = TurnParts(
            conversation=conversation, caller=caller, updates=updates, registry=self.registry, host=self.host,
            compactor=compactor,
            views=ToolViews(self.registry, self.root, profile, system_prompt=lambda: conversation.system_prompt),
            profile=profile,
            tools=ToolRunner(settings=s, host=self.host, root=self.root, session_id=self.session_id,
                             policy=self.policy, updates=updates, checkpoints=self._checkpoints,
                             context_window=lambda: self.context_window, sandbox=self.sandbox,
                             profile=profile, tap=parent.tap if parent else None),
            control=control or TurnControl(), titles=Titles(s.titles, conversation, caller, updates,
                                                 use_model=profile.model_titles),
            budget=self.budget, budget_shared=iteration_budget is not None, max_iterations=s.max_iterations,
            trajectory_path=Path(s.trajectory_path) if s.trajectory_path else None, workflows=workflows)
        self._parts.tools.on_mode = self.set_mode
        self.workflows = workflows
        if workflows is not None:  # its tools, where the user hears of its problems (docs/workflows.md)
            workflows.attach(self.session_id, lambda text: updates.send(events.message_chunk(f"\n> agentls: {text}\n\n")))
            for tool in workflows.tools() if not profile.compact else ():  # a small model: its compact tool set only
                self.registry.add(tool)
            self._parts.tools.read_outside = workflows.read_outside
        self._ready = False
        self._closed = False

    # ----- the parts' state, as the faces read it ----------------------------------------------
    @property
    def model(self) -> str:
        return self._endpoints.model

    @model.setter
    def model(self, value: str) -> None:
        """The model of the next call (a client's model picker may change it between turns)."""
        self._endpoints.model = value
        self.settings = replace(self.settings, model=value)  # a child built from these settings uses it too

    @property
    def thinking_budget(self) -> int | None:
        return self._endpoints.thinking_budget

    @thinking_budget.setter
    def thinking_budget(self, value: int | None) -> None:
        self._endpoints.thinking_budget = value

    @property
    def provider_name(self) -> str:
        return self._endpoints.provider_name

    @property
    def http_client(self) -> httpx.AsyncClient | None:
        """The agent's HTTP client once set up (its children share it)."""
        return self._endpoints.client

    @property
    def context_window(self) -> int:
        return self._endpoints.context_window

    @property
    def compression_threshold(self) -> float:
        return self._parts.compactor.threshold

    @property
    def cost(self) -> float | None:
        """What this session's model calls cost so far in this process (USD), when the model's price is known."""
        return self._parts.caller.cost

    @property
    def last_prompt_tokens(self) -> int | None:
        return self._parts.caller.last_prompt_tokens

    @property
    def context_used(self) -> int:
        """About how many tokens the session's context holds now (the context meter's figure)."""
        return self._parts.compactor.pressure()

    @property
    def messages(self) -> list[Message]:
        return self._parts.conversation.messages

    @property
    def system_prompt(self) -> str | None:
        return self._parts.conversation.system_prompt

    @property
    def store(self) -> SessionStore | None:
        return self._parts.conversation.store

    @property
    def plan(self) -> list[dict[str, Any]]:
        return self._parts.tools.plan

    @property
    def running(self) -> bool:
        return self._parts.control.running

    def transcript(self) -> list[Message]:
        return self._parts.conversation.transcript()

    # ----- lifecycle -------------------------------------------------------------------------
    async def __aenter__(self) -> AIAgent:
        try:
            await self._setup()
        except BaseException:  # a store left open keeps its thread, and the process, alive
            with anyio.CancelScope(shield=True):
                await self.close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _setup(self) -> None:
        if self._ready:
            return
        if self._closed:
            raise RuntimeError("this agent is closed")
        parts = self._parts
        await self._endpoints.open()
        parts.compactor.open(self.context_window)
        await parts.conversation.open()
        parts.tools.open(parts.conversation.messages)
        self._ready = True

    async def close(self) -> None:
        """Idempotent: stops the title task, then releases terminals and closes the clients and the store."""
        if self._closed:
            return
        self._closed = True
        await self._parts.titles.aclose()
        steps: tuple[Callable[[], Awaitable[None]], ...] = (
            lambda: self.host.release(None), self._endpoints.aclose, self._parts.conversation.close,
            self.sandbox.close)
        for step in steps:
            try:
                await step()
            except Exception:
                log.exception("error while closing the agent")

    def _may_run_outside(self, key: str) -> bool:
        """The user answered "always" to running commands with this key outside the sandbox."""
        return self.policy.decide("unsandboxed", outside_key(key), False) == "allow"

    # ----- control from other tasks ----------------------------------------------------------
    def steer(self, text: str) -> bool:
        """Queue ``text`` for delivery after the current tool round. False when no turn is running."""
        return self._parts.control.steer(text)

    def interrupt(self) -> bool:
        """Stop the running turn at the next safe boundary (aborting a model call or tools at once)."""
        return self._parts.control.interrupt()

    # ----- turns and session operations ------------------------------------------------------
    async def chat(self, message: Any) -> str:
        out = await self.run_conversation(message)
        return out.final_response or ""

    async def run_conversation(self, user_message: Any, system_message: str | None = None,
                               conversation_history: Sequence[Any] | None = None, task_id: str | None = None,
                               *, runtime_context: str | None = None, echo_prompt: bool = False) -> TurnResult:
        """One turn. ``runtime_context`` (editor state) rides on this turn's user message only;
        ``echo_prompt`` sends the prompt as a ``user_message_chunk`` (for turns the client did not type)."""
        content = await prompt_content(user_message, host_reader(self.host, self.root))  # @-mentions read
        request = TurnRequest(content, system_message, conversation_history, task_id,
                              runtime_context, echo_prompt)
        async with self._parts.control.locked():
            await self._setup()
            return await run_turn(self._parts, request)

    async def compress(self, focus: str | None = None, keep_last: int | None = None, preview: bool = False,
                       aggressive: bool = False) -> dict[str, Any]:
        """Manual compression. While a turn runs it happens at the turn's next safe boundary."""
        compactor = self._parts.compactor
        while self.running:
            queued = await compactor.queue(focus=focus, keep_last=keep_last, preview=preview, aggressive=aggressive)
            if queued is not AFTER_TURN:
                return queued
        async with self._parts.control.locked():
            await self._setup()
            if self.workflows is not None:
                await self.workflows.before_compact("manual", focus)
            out = await compactor.compress(focus=focus, keep_last=keep_last, preview=preview, aggressive=aggressive)
            return out or {"error": "compression failed"}

    async def rewind(self, turns: int = 1, *, force: bool = False) -> RewindResult:
        """Drop the last ``turns`` turns and put back the files they changed (``RewindRefused`` changes nothing)."""
        async with self._parts.control.locked():
            await self._setup()
            result = await rewind(self._parts.conversation, self._checkpoints, self.host, turns, force=force)
            self._parts.caller.last_prompt_tokens = None  # the count was of the turns dropped
            return result

    def set_extra_roots(self, roots: Sequence[Path]) -> None:
        """More workspace roots (ACP ``additionalDirectories``, checked by ``paths.extra_root``): reads, writes and
        searches may go inside them, and sandboxed commands may write there."""
        from dataclasses import replace

        before = self.root.extra
        self.root.extra = tuple(str(r) for r in roots)
        base = tuple(w for w in self.sandbox.config.writable if w not in before)
        self.sandbox.config = replace(self.sandbox.config, writable=(*base, *self.root.extra))

    def set_mode(self, mode: str) -> None:
        """The approval mode from the next tool call on; ``plan`` adds the ``exit_plan`` tool (docs/acp.md "Plan mode")."""
        from .plan_mode import EXIT_PLAN

        self.policy.mode = mode
        if mode == "plan":
            self.registry.add(EXIT_PLAN)
        elif self.registry.get(EXIT_PLAN.name) is not None:
            self.registry.remove(EXIT_PLAN.name)

    async def undo(self, turns: int = 1, *, force: bool = False) -> list[str]:
        """Restore the files edited in the last ``turns`` turns; returns the restored paths. ``RewindRefused``
        (nothing changed) when a file changed since, unless ``force``, as for ``rewind``."""
        if turns < 1:
            raise ValueError("turns must be at least 1")
        async with self._parts.control.locked():
            await self._setup()
            return await self._checkpoints.restore(turns, self.host, force=force)
