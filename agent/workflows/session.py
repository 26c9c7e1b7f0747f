"""``Workflows``: one session's commands, skills, hooks and memory, and the calls the loop makes into them
(docs/workflows.md). Built once per agent; skills, memory and the hook configuration are read then (the
system prompt's part is frozen for the session), command files again at each turn and each listing."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

from . import skills as skill_files
from .commands import RESERVED, CommandFiles, CustomCommand
from .hook_config import HookSpec, configured
from .hooks import HookOutcome, Hooks
from .memory import Memory, default_user_path
from .scan import user_dir

log = logging.getLogger("agentls.workflows")
_COMMAND = re.compile(r"^/([A-Za-z0-9_.:-]+)(?:[ \t]+|\n|$)")
_AFTER = re.compile(r"\n\n(?=<editor_context>|<resource)")  # what the face appended after the typed text
MAX_STOP_CONTINUES = 3  # a Stop hook may send the model back to work this often per turn
Send = Callable[[str], Awaitable[None]]


@dataclass
class TurnStart:
    content: Any  # the turn's user message content (a command expanded, hook context added)
    # Answered here, without the model (``/memory``, a prompt a UserPromptSubmit hook blocked): shown to the
    # user; nothing reaches the model or the transcript
    answer: str | None = None


class Workflows:
    def __init__(self, workspace: Path, *, user: Path, hooks: Sequence[HookSpec] = (), problems: Sequence[str] = (),
                 memory_path: Path | None = None) -> None:
        self.workspace = workspace
        self.user = user
        self._files = CommandFiles(workspace, user)
        self.skills, skill_problems = skill_files.load(workspace, user)
        self.memory = Memory(memory_path or default_user_path(), workspace / ".agentls" / "memory.md")
        memory_section, memory_problems = self.memory.snapshot()
        sections = [s for s in (skill_files.prompt_section(self.skills), memory_section) if s]
        self._section = "\n\n".join(sections) or None  # frozen: the session's system prompt has it
        self._readable = skill_files.readable(self.skills)
        self.hooks = Hooks(list(hooks), workspace, self.tell)
        self._untold = [*problems, *skill_problems, *memory_problems]
        self._told: set[str] = set()
        self._send: Send | None = None
        self.commands, problems_now = self._scan()  # read again at each turn (refresh)
        self._untold += problems_now
        self._session_started = False

    @classmethod
    def from_config(cls, workspace: Path, user_config: Path, *, trusted: bool) -> Workflows:
        """From the user config's folder and hooks, the workspace's files (its hooks only when ``trusted``)."""
        specs, problems = configured(workspace, user_config, trusted=trusted)
        return cls(workspace, user=user_dir(user_config), hooks=specs, problems=problems)

    def attach(self, session_id: str, send: Send) -> None:
        """The agent's session id (for hook input) and where the user is told things."""
        self.hooks.session_id = session_id
        self._send = send

    # ----- what the user is told, once ------------------------------------------------------
    async def tell(self, text: str) -> None:
        """Once: to the session's messages when a face listens (logged at info level then, so a face that
        prints warnings does not show it twice), else as a logged warning."""
        if self._send is None:
            log.warning("%s", text)
            return
        log.info("%s", text)
        await self._send(text)

    async def tell_problems(self) -> None:
        untold, self._untold = [p for p in dict.fromkeys(self._untold) if p not in self._told], []
        for problem in untold:
            self._told.add(problem)
            await self.tell(problem)

    def problems(self) -> list[str]:
        """Everything found wrong so far, told or not (a face's notice)."""
        return sorted(self._told | set(self._untold))

    # ----- system prompt, tools, files read_file may read --------------------------------------
    def prompt_section(self) -> str | None:
        return self._section

    def tools(self) -> list[Any]:
        from .tools import memory_tool, skill_tool

        return ([skill_tool(self.skills)] if self.skills else []) + [memory_tool(self.memory)]

    async def read_outside(self, raw: object) -> str | None:
        """A user-level skill's file, when ``raw`` names exactly one of them (else None: the usual rules)."""
        if not isinstance(raw, str) or not raw.startswith(("/", "~")) or not self._readable:
            return None
        real = os.path.realpath(os.path.expanduser(raw))
        if real not in self._readable:
            return None
        from ..fileio import decode_text, read_small
        from ..tools.base import ToolFailure

        try:
            data = await anyio.to_thread.run_sync(read_small, Path(real), 1024 * 1024)
        except OSError as exc:
            raise ToolFailure(f"{raw}: {exc.strerror or exc}") from None
        return decode_text(data)

    # ----- commands ----------------------------------------------------------------------------
    def _scan(self) -> tuple[dict[str, CustomCommand], list[str]]:
        found, problems = self._files.load()
        for skill in sorted(self.skills.values(), key=lambda s: s.name):
            if skill.name not in found and skill.name not in RESERVED:
                found[skill.name] = CustomCommand(
                    name=skill.name, description=skill.description, hint=None, body=skill.loaded(),
                    path=skill.folder / "SKILL.md", scope=skill.scope, style="skill", skill=skill)
        return found, problems

    async def refresh(self) -> dict[str, CustomCommand]:
        """The command files read again (only the changed ones are parsed); new problems are told once."""
        self.commands, problems = await anyio.to_thread.run_sync(self._scan)
        self._untold += [p for p in problems if p not in self._told]
        return self.commands

    def expand(self, content: Any) -> Any:
        """``/name args`` as the command's body, arguments put in; anything else unchanged."""
        text = content if isinstance(content, str) else (
            content[0].get("text") if isinstance(content, list) and content and isinstance(content[0], dict)
            and content[0].get("type") == "text" else None)
        if not isinstance(text, str):
            return content
        match = _COMMAND.match(text.lstrip())
        command = self.commands.get(match.group(1)) if match else None
        if match is None or command is None:
            return content
        rest = text.lstrip()[match.end():]
        tail = ""
        cut = _AFTER.search(rest)
        if cut is not None:
            rest, tail = rest[:cut.start()], rest[cut.start():]
        expanded = command.expand(rest) + tail
        return expanded if isinstance(content, str) else [{**content[0], "text": expanded}, *content[1:]]

    # ----- the loop's calls --------------------------------------------------------------------
    async def begin_turn(self, content: Any, *, resumed: bool) -> TurnStart:
        """At the start of a turn: commands re-read and expanded, SessionStart (once per agent) and
        UserPromptSubmit run; their context rides on the user message."""
        await self.refresh()
        await self.tell_problems()
        if _AFTER.split(_text_of(content).strip(), 1)[0].strip() == "/memory":
            return TurnStart(content, answer=self.memory.report())
        content = self.expand(content)
        context: list[str] = []
        if not self._session_started:
            self._session_started = True
            source = "resume" if resumed else "startup"
            context += (await self.hooks.fire("SessionStart", {"source": source}, source)).context
        if self.hooks.any("UserPromptSubmit"):
            prompt = _text_of(content)
            outcome = await self.hooks.fire("UserPromptSubmit", {"prompt": prompt})
            if outcome.blocked is not None:
                return TurnStart(content, answer=f"The prompt was blocked by a UserPromptSubmit hook: {outcome.blocked}")
            context += outcome.context
        if context:
            block = "<hook-context>\n" + "\n\n".join(context) + "\n</hook-context>"
            content = f"{content}\n\n{block}" if isinstance(content, str) else [*content, {"type": "text", "text": block}]
        return TurnStart(content)

    async def before_tool(self, name: str, args: dict[str, Any], call_id: str) -> HookOutcome:
        return await self.hooks.fire("PreToolUse", {"tool_name": name, "tool_input": args, "tool_use_id": call_id},
                                     name)

    async def after_tool(self, name: str, args: dict[str, Any], call_id: str, text: str, is_error: bool) -> str | None:
        """PostToolUse: what the hooks say to the model about the result (exit 2's stderr, a block's reason,
        additionalContext), or None."""
        if not self.hooks.any("PostToolUse"):
            return None
        response = {"output": text, "is_error": is_error, "success": not is_error}
        outcome = await self.hooks.fire("PostToolUse", {"tool_name": name, "tool_input": args, "tool_use_id": call_id,
                                                        "tool_response": response}, name)
        said = [*outcome.context, *([outcome.blocked] if outcome.blocked else [])]
        return "\n".join(said) or None

    async def at_stop(self, answer: str, continues: int, event: str = "Stop") -> str | None:
        """Stop (or SubagentStop): the message that sends the model back to work, or None to end. After
        ``MAX_STOP_CONTINUES`` continues in a turn the hooks are not asked again."""
        if not self.hooks.any(event):
            return None
        if continues >= MAX_STOP_CONTINUES:
            await self.tell(f"the {event} hooks asked to continue {continues} times this turn; the turn ends now")
            return None
        outcome = await self.hooks.fire(event, {"stop_hook_active": continues > 0, "last_assistant_message": answer})
        return outcome.blocked

    async def subagent_stop(self, answer: str, continues: int) -> str | None:
        """The entry point for a child agent's end (``delegate_task``): as ``at_stop``, for SubagentStop."""
        return await self.at_stop(answer, continues, "SubagentStop")

    async def before_compact(self, trigger: str, focus: str | None) -> None:
        if self.hooks.any("PreCompact"):
            outcome = await self.hooks.fire("PreCompact", {"trigger": trigger, "custom_instructions": focus or ""},
                                            trigger)
            if outcome.blocked:
                await self.tell(f"a PreCompact hook said: {outcome.blocked}")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
