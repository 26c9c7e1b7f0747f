"""Hooks with Claude Code's events and JSON: what each outcome means for the turn (docs/workflows.md, "Hooks").

``Hooks.fire(event, fields, match)`` runs the matching hooks together and folds what they said into one
``HookOutcome``: exit 0 goes on (its stdout, or JSON ``hookSpecificOutput.additionalContext``, is context
where the event has any), exit 2 blocks with its stderr, any other end is a warning to the user. JSON stdout
may carry ``decision``/``reason``, ``hookSpecificOutput.permissionDecision`` and ``systemMessage``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from ..data_files import BadData, json_value
from .hook_config import AS_CLAUDE, HookSpec
from .hook_process import HookRun, run_hook

log = logging.getLogger("agentls.hooks")
MAX_TEXT = 10_000  # of a hook's message, as the model or the user reads it
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")  # plain stdout of these is context for the model
Warn = Callable[[str], Awaitable[None]]


@dataclass
class HookOutcome:
    blocked: str | None = None  # why (exit 2's stderr, a "block" decision's reason, a "deny")
    context: list[str] = field(default_factory=list)  # for the model, on the turn's user message or a tool result
    permission: str | None = None  # PreToolUse: "allow", "deny" or "ask"
    reason: str | None = None  # the permission decision's reason


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"\n[... {len(text) - MAX_TEXT} characters cut]"


def _json(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json_value(text)
    except BadData:  # not JSON (or nested beyond parsing): plain stdout
        return None
    return data if isinstance(data, dict) else None


def _as_claude(payload: dict[str, Any]) -> dict[str, Any]:
    """The input a Claude Code hook expects: its tool names (``Bash``), ``file_path`` besides ``path``."""
    name = payload.get("tool_name")
    if not isinstance(name, str) or name not in AS_CLAUDE:
        return payload
    tool_input = payload.get("tool_input")
    if isinstance(tool_input, dict) and "path" in tool_input and "file_path" not in tool_input:
        tool_input = {**tool_input, "file_path": tool_input["path"]}
    return {**payload, "tool_name": AS_CLAUDE[name], "tool_input": tool_input}


class Hooks:
    def __init__(self, specs: list[HookSpec], workspace: Path, warn: Warn) -> None:
        self.specs = specs
        self.workspace = workspace
        self.session_id = ""
        self.extra: dict[str, Any] = {}  # more input fields (a subagent's: its parent's session and call)
        self.transcript_path: str | None = None
        self._warn = warn

    def any(self, event: str) -> bool:
        return any(s.event == event for s in self.specs)

    async def fire(self, event: str, fields: dict[str, Any], match: str | None = None) -> HookOutcome:
        specs = [s for s in self.specs if s.event == event and s.matches(match)]
        outcome = HookOutcome()
        if not specs:
            return outcome
        payload = {"session_id": self.session_id, "cwd": str(self.workspace), "hook_event_name": event, **self.extra,
                   **fields}
        if self.transcript_path:
            payload["transcript_path"] = self.transcript_path
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
        as_claude = json.dumps(_as_claude(payload), ensure_ascii=False, default=str).encode()
        env = {"AGENTLS_PROJECT_DIR": str(self.workspace), "CLAUDE_PROJECT_DIR": str(self.workspace),
               "AGENTLS_HOOK_EVENT": event}
        runs: list[HookRun | None] = [None] * len(specs)

        async def one(i: int) -> None:
            runs[i] = await run_hook(specs[i].command, as_claude if specs[i].claude else data, self.workspace,
                                     specs[i].timeout, env)

        async with anyio.create_task_group() as tg:
            for i in range(len(specs)):
                tg.start_soon(one, i)
        for spec, run in zip(specs, runs, strict=True):
            assert run is not None
            await self._fold(spec, run, outcome)
        return outcome

    async def _fold(self, spec: HookSpec, run: HookRun, outcome: HookOutcome) -> None:
        name = f"{spec.event} hook `{spec.command[:80]}`"
        if run.error is not None or run.timed_out or run.exit_code is None:
            why = run.error or (f"timed out after {spec.timeout:g}s and was stopped" if run.timed_out
                                else "was killed by a signal")
            await self._warn(f"{name} {why}; going on without it")
            return
        if run.exit_code == 2:
            message = _cut(run.stderr) or f"blocked by the {spec.event} hook"
            outcome.blocked = message if outcome.blocked is None else f"{outcome.blocked}\n{message}"
            return
        if run.exit_code != 0:
            first = _cut(run.stderr).splitlines()[:1]
            await self._warn(f"{name} exited with code {run.exit_code}{': ' + first[0] if first else ''}; going on")
            return
        data = _json(run.stdout)
        if data is None:
            if spec.event in CONTEXT_EVENTS and run.stdout.strip():
                outcome.context.append(_cut(run.stdout))
            return
        await self._decided(spec, data, outcome)

    async def _decided(self, spec: HookSpec, data: dict[str, Any], outcome: HookOutcome) -> None:
        if isinstance(data.get("systemMessage"), str) and data["systemMessage"].strip():
            await self._warn(_cut(data["systemMessage"]))
        specific = data.get("hookSpecificOutput")
        specific = specific if isinstance(specific, dict) else {}
        extra = specific.get("additionalContext")
        if isinstance(extra, str) and extra.strip():
            outcome.context.append(_cut(extra))
        reason = data.get("reason") if isinstance(data.get("reason"), str) else None
        decision = data.get("decision")
        permission = specific.get("permissionDecision")
        if spec.event == "PreToolUse":
            if decision == "approve":
                permission = permission or "allow"
            elif decision == "block":
                permission = "deny"
            if permission in ("allow", "deny", "ask"):
                why = specific.get("permissionDecisionReason")
                why = why if isinstance(why, str) and why.strip() else reason
                # the strictest answer wins: deny over ask over allow
                rank = {"allow": 0, "ask": 1, "deny": 2}
                if outcome.permission is None or rank[permission] > rank[outcome.permission]:
                    outcome.permission, outcome.reason = permission, why
                if permission == "deny":
                    outcome.blocked = _cut(why or "denied by the PreToolUse hook")
            return
        if decision == "block":
            outcome.blocked = _cut(reason or f"blocked by the {spec.event} hook")
