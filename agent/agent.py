"""``AIAgent``: the public face of the core loop (docs/loop.md §1)."""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from agentls.agent import events
from agentls.agent.budget import IterationBudget
from agentls.agent.host import Host
from agentls.agent.disk_host import DiskHost, UpdateCallback
from agentls.agent.loop.finalize import finalize, result
from agentls.agent.loop.state import TurnState
from agentls.agent.loop.turn import run_turn
from agentls.agent.permissions import PermissionPolicy
from agentls.agent.prompt_blocks import normalize_prompt
from agentls.agent.sandbox.policy import SandboxConfig
from agentls.agent.sandbox.session import CommandSandbox, outside_key
from agentls.agent.replay import replay_updates
from agentls.agent.result import ExitReason, TurnResult
from agentls.agent.providers.base import Provider
from agentls.agent.providers.factory import Endpoint, build_provider, parse_fallback
from agentls.agent.session_ops import SessionOps
from agentls.agent.tools.base import Tool
from agentls.agent.tools.registry import BUILTIN_TOOLS, ToolRegistry
from agentls.agent.transcript import repair
from agentls.agent.types import Message, SessionUpdate

if TYPE_CHECKING:
    from agentls.agent.context.compress import Compressor
    from agentls.agent.context.hints import HintTracker
    from agentls.agent.sessions.store import SessionStore

log = logging.getLogger("agentls.agent")


class AIAgent(SessionOps):
    """One agent session. Construction stores configuration only; setup happens on first use."""

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: str = "openai",
        max_iterations: int = 90,
        fallback_models: Sequence[Any] = (),
        session_db: str | Path | SessionStore | None = None,
        workspace: str | Path = ".",
        host: Host | None = None,
        *,
        session_id: str | None = None,
        iteration_budget: IterationBudget | None = None,
        stream: bool = True,
        tool_mode: str | None = None,
        context_window: int | None = None,
        compression_threshold: float = 0.5,
        approval: str = "ask",
        allow_dangerous: bool = False,
        aux_model: str | None = None,
        titles: str = "prompt",
        request_timeout: float = 120.0,
        max_retries: int = 3,
        retry_base_delay: float = 1.0,
        retry_max_delay: float = 30.0,
        max_tokens: int | None = None,
        temperature: float | None = None,
        thinking_budget: int | None = None,
        tools: Sequence[Tool] | None = None,
        on_update: UpdateCallback | None = None,
        terminal_timeout: float = 120.0,
        tool_output_limit: int | None = None,
        trajectory_path: str | Path | None = None,
        http_client: httpx.AsyncClient | None = None,
        local_model_path: str | Path | None = None,
        system_message: str | None = None,
        local_progress: Any = None,
        sandbox: SandboxConfig | None = None,
    ) -> None:
        if model is not None and (model == "local" or model.startswith("local:")):
            provider = "local"
        self.provider_name = provider
        self.model = model or ("local" if provider == "local" else "")
        self.base_url = base_url
        self._api_key = api_key
        self.max_iterations = max_iterations
        self.fallback_models = list(fallback_models)
        self.root = Path(workspace).resolve()
        self.host: Host = host if host is not None else DiskHost(self.root, on_update)
        self._extra_listener = on_update if host is not None else None  # a host *and* a callback: feed both
        self.session_id = session_id or uuid.uuid4().hex
        self.budget = iteration_budget or IterationBudget(max_iterations)
        self._budget_shared = iteration_budget is not None
        self.stream = stream
        self.tool_mode = tool_mode
        self._context_window = context_window
        self.compression_threshold = compression_threshold
        self.policy = PermissionPolicy(approval, allow_dangerous=allow_dangerous)
        self.sandbox = CommandSandbox(sandbox or SandboxConfig(), self.root, self._may_run_outside)
        self.aux_model = aux_model
        self.titles = titles
        self.request_timeout = request_timeout
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self.max_tokens = max_tokens
        # A small local model is far more reliable with tools when it does not sample.
        self.temperature = 0.0 if temperature is None and provider == "local" else temperature
        self.thinking_budget = thinking_budget
        self.registry = ToolRegistry(tools if tools is not None else BUILTIN_TOOLS)
        self.terminal_timeout = terminal_timeout
        self._tool_output_limit = tool_output_limit
        self.trajectory_path = Path(trajectory_path) if trajectory_path else None
        self._session_db = session_db
        self._client = http_client
        self._owns_client = http_client is None
        self._local_model_path = local_model_path
        self._window_cache: tuple[str, int] | None = None
        self._system_message = system_message
        self._local_progress = local_progress  # Callable[[str, float], None] while the local model loads
        # State
        self.messages: list[Message] = []
        self.system_prompt: str | None = None
        self.last_prompt_tokens: int | None = None
        self.plan: list[dict[str, Any]] = []
        self._lock = asyncio.Lock()
        self._running = False
        self._interrupt_requested = False
        self._scope: anyio.CancelScope | None = None
        self._steers: list[str] = []
        self._wire_cache: dict[int, Any] = {}
        self._providers: dict[tuple[Any, ...], Provider] = {}
        self._local: Any = None
        self._setup_done = False
        self._closed = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._pending_compress: list[tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]] = []
        self._init_session_state()
        self.hints: HintTracker
        self.compressor: Compressor
        self.store: SessionStore | None = None

    # ----- lifecycle -------------------------------------------------------------------------
    async def __aenter__(self) -> AIAgent:
        await self._setup()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _setup(self) -> None:
        if self._setup_done:
            return
        if self._closed:
            raise RuntimeError("this agent is closed")
        from agentls.agent.context.compress import Compressor
        from agentls.agent.context.hints import HintTracker

        if self._client is None:
            from agentls.agent.providers.http import make_client

            self._client = make_client(self.request_timeout, tls=self._needs_tls())
        self.hints = HintTracker(self.root)
        self.compressor = Compressor(self.context_window, threshold=self.compression_threshold)
        await self._open_store()
        self.hints.seed_from(self.messages)
        self._setup_done = True

    async def close(self) -> None:
        """Idempotent: stops owned tasks and waits for them, then closes clients, terminals and the store."""
        if self._closed:
            return
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for step in (self.host.release(None), self._close_providers(), self._close_store(), self.sandbox.close()):
            try:
                await step
            except Exception:
                log.exception("error while closing the agent")

    async def _close_providers(self) -> None:
        if self._local is not None:
            await self._local.stop()
        if self._client is not None and self._owns_client:
            await self._client.aclose()

    def _may_run_outside(self, key: str) -> bool:
        """The user answered "always" to running commands with this key outside the sandbox."""
        return self.policy.decide("unsandboxed", outside_key(key), False) == "allow"

    def _spawn(self, coro: Any) -> None:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ----- providers -------------------------------------------------------------------------
    @property
    def context_window(self) -> int:
        if self._context_window:
            return self._context_window
        if self.provider_name == "local":
            return 8192
        from agentls.agent.context.tokens import context_window_for

        cached = self._window_cache
        if cached is None or cached[0] != self.model:
            cached = self._window_cache = (self.model, context_window_for(self.model))
        return cached[1]

    def _needs_tls(self) -> bool:
        """Whether any endpoint is https (loading the CA bundle costs ~50 ms; local servers don't need it)."""
        primary = self._primary()
        for endpoint in [primary, *(parse_fallback(f, primary) for f in self.fallback_models)]:
            if endpoint.provider != "local" and not (endpoint.base_url or "").startswith("http://"):
                return True
        return False

    @property
    def tool_output_limit(self) -> int:
        """Chars of one tool result the model sees: as configured, else about a quarter of the context window."""
        return self._tool_output_limit or min(50_000, self.context_window)

    def _primary(self) -> Endpoint:
        return Endpoint(self.provider_name, self.model, self.base_url, self._api_key, self.tool_mode,
                        self.thinking_budget)

    async def _provider_for(self, index: int, model: str | None = None) -> tuple[Provider, str]:
        primary = self._primary()
        endpoint = primary if index == 0 else parse_fallback(self.fallback_models[index - 1], primary)
        provider = self._providers.get(endpoint.key())
        if provider is None:
            assert self._client is not None
            base_url = None
            if endpoint.provider == "local":
                base_url = await self._local_url(endpoint.model)
            provider = build_provider(endpoint, self._client, base_url)
            self._providers[endpoint.key()] = provider
        elif endpoint.provider == "local":
            await self._local_url(endpoint.model)
        return provider, model or endpoint.model

    async def _local_url(self, model: str) -> str:
        if self._local is None:
            from agentls.agent.local.runtime import LocalModelServer

            path = self._local_model_path or (model[len("local:"):] if model.startswith("local:") else None)
            self._local = LocalModelServer(Path(path) if path else None, progress=self._local_progress)
        url: str = await self._local.ensure_running()
        return url

    # ----- control from other tasks ----------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._running

    def steer(self, text: str) -> bool:
        """Queue ``text`` for delivery after the current tool round. False when no turn is running."""
        if not self._running or not text.strip():
            return False
        self._steers.append(text)
        return True

    def interrupt(self) -> bool:
        """Stop the running turn at the next safe boundary (aborting a provider call or tools at once)."""
        if not self._running:
            return False
        self._interrupt_requested = True
        if self._scope is not None:
            self._scope.cancel()
        return True

    def _take_steer(self) -> str | None:
        if not self._steers:
            return None
        text = "\n\n".join(self._steers)
        self._steers.clear()
        return text

    @contextmanager
    def _interruptible(self) -> Iterator[anyio.CancelScope]:
        scope = anyio.CancelScope()
        previous, self._scope = self._scope, scope
        if self._interrupt_requested:
            scope.cancel()
        try:
            with scope:
                yield scope
        finally:
            self._scope = previous

    async def _emit(self, update: SessionUpdate) -> None:
        try:
            await self.host.send_update(update)
            if self._extra_listener is not None:
                result = self._extra_listener(update)
                if inspect.isawaitable(result):
                    await result
        except (anyio.get_cancelled_exc_class(), KeyboardInterrupt):
            raise
        except Exception:  # a client that cannot take an update must not break the turn
            log.exception("sending an update failed")

    # ----- turns -----------------------------------------------------------------------------
    def transcript(self) -> list[Message]:
        head: list[Message] = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return head + list(self.messages)

    async def chat(self, message: Any) -> str:
        out = await self.run_conversation(message)
        return out.final_response or ""

    async def run_conversation(self, user_message: Any, system_message: str | None = None,
                               conversation_history: Sequence[Any] | None = None, task_id: str | None = None,
                               *, runtime_context: str | None = None, echo_prompt: bool = False) -> TurnResult:
        """One turn. ``runtime_context`` (editor state) rides on this turn's user message only;
        ``echo_prompt`` sends the prompt as a ``user_message_chunk`` (for turns the client did not type)."""
        content = normalize_prompt(user_message)
        async with self._lock:
            await self._setup()
            self._running = True  # steers and interrupts count from here, while the lease is taken too
            self._interrupt_requested = False
            try:
                async with self._turn_lease():  # SessionBusy: another process is driving this session
                    return await self._leased_turn(content, system_message, conversation_history, task_id,
                                                   runtime_context, echo_prompt)
            finally:
                self._running = False
                self._interrupt_requested = False

    async def _leased_turn(self, content: Any, system_message: str | None, conversation_history: Sequence[Any] | None,
                           task_id: str | None, runtime_context: str | None, echo_prompt: bool) -> TurnResult:
        await self._emit(events.turn_state("running", taskId=task_id))
        if echo_prompt:
            for update in replay_updates([{"role": "user", "content": content}]):
                await self._emit(update)
        exit_reason = ExitReason.CANCELLED
        try:
            out = await self._turn(content, system_message, conversation_history, task_id, runtime_context)
            exit_reason = out.exit_reason
            return out
        finally:
            self._running = False
            self._interrupt_requested = False
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                await self._emit(events.turn_state("idle", exitReason=exit_reason))

    async def _turn(self, content: Any, system_message: str | None, history: Sequence[Any] | None,
                    task_id: str | None, runtime_context: str | None) -> TurnResult:
        if history is not None:
            items = list(history)
            if items and isinstance(items[0], dict) and items[0].get("role") == "system":
                system_message = system_message or str(items.pop(0).get("content") or "")
            self.messages = repair(items)
            self._needs_rewrite = True
        await self._ensure_system_prompt(system_message)
        if not self._budget_shared:
            self.budget.reset()
        self._turn_index += 1
        self.messages.append({"role": "user", "content": content})
        notes = self._take_notes()
        context = "\n\n".join(x for x in (notes, runtime_context) if x) or None
        turn = TurnState(task_id=task_id, turn_index=self._turn_index, user_index=len(self.messages) - 1,
                         runtime_context=context)
        try:
            await run_turn(self, turn)
        except anyio.get_cancelled_exc_class():
            turn.exit_reason = ExitReason.CANCELLED
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await finalize(self, turn)
            for _, future in self._pending_compress:
                future.cancel()
            self._pending_compress.clear()
            raise
        await finalize(self, turn)
        await self._run_pending_compressions(turn)  # asked for during the turn, after its last model call
        try:
            # A CPU-bound local model has better things to do than naming sessions.
            if await self._quick_title(content) and self.titles == "model" and self.provider_name != "local":
                self._spawn(self._make_title(content))
        except Exception as exc:
            turn.cleanup_errors.append(f"title: {type(exc).__name__}: {exc}")
        return result(self, turn)
