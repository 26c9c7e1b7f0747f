"""Hook configuration: ``[[hooks.<Event>]]`` tables in the user config and (trusted only) the workspace's
``.agentls.toml``, and Claude Code's ``hooks`` JSON in ``.claude/settings.json`` (trusted only)
(docs/workflows.md, "Hooks")."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data_files import BadData, json_value, toml_table

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact", "SubagentStop")
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
MAX_FILE = 1024 * 1024


# Claude Code's tool names and ours: a matcher in a Claude Code file is read with its names mapped, and its
# hooks get Claude Code's tool_name (and file_path besides path) in their input (docs/workflows.md).
CLAUDE_TOOLS = {"Bash": ("terminal",), "Edit": ("edit_file",), "MultiEdit": ("edit_file",), "Write": ("write_file",),
                "NotebookEdit": ("edit_file",), "Read": ("read_file",), "Grep": ("search_files",),
                "Glob": ("search_files", "list_dir"), "LS": ("list_dir",), "WebFetch": ("fetch_url",),
                "Task": ("delegate_task",), "TodoWrite": ("todo",)}
AS_CLAUDE = {"terminal": "Bash", "edit_file": "Edit", "write_file": "Write", "read_file": "Read",
             "search_files": "Grep", "list_dir": "LS", "fetch_url": "WebFetch", "delegate_task": "Task",
             "todo": "TodoWrite"}
OUR_TOOLS = ("read_file", "write_file", "edit_file", "list_dir", "search_files", "terminal", "diagnostics",
             "fetch_url", "todo", "skill", "memory", "delegate_task")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
_CLAUDE_NAME = re.compile(r"\b(" + "|".join(CLAUDE_TOOLS) + r")\b")


@dataclass(frozen=True)
class HookSpec:
    event: str
    command: str
    matcher: re.Pattern[str] | None  # None: every tool (or source, trigger)
    timeout: float
    source: str  # the file it came from
    claude: bool = False  # from Claude Code's settings.json: its input uses Claude Code's tool names

    def matches(self, value: str | None) -> bool:
        return self.matcher is None or value is None or self.matcher.fullmatch(value) is not None


def _matcher(raw: Any, claude: bool = False) -> re.Pattern[str] | None:
    if raw is None or raw in ("", "*"):
        return None
    if not isinstance(raw, str):
        raise ValueError("'matcher' must be a string (a regular expression on the tool name)")
    if claude:  # "Bash", "Edit|Write": Claude Code's names, as ours
        raw = _CLAUDE_NAME.sub(lambda m: "(?:" + "|".join(CLAUDE_TOOLS[m[1]]) + ")", raw)
    try:
        return re.compile(raw)
    except re.error as exc:
        raise ValueError(f"'matcher' {raw!r} is not a valid regular expression: {exc}") from None


def _timeout(raw: Any) -> float:
    if raw is None:
        return DEFAULT_TIMEOUT
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 < raw <= MAX_TIMEOUT:
        raise ValueError(f"'timeout' must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}")
    return float(raw)


def parse(table: Any, source: str, claude: bool = False) -> tuple[list[HookSpec], list[str]]:
    """Hooks from a ``hooks`` table. Each entry is ours (``matcher``, ``command``, ``timeout``) or Claude Code's
    (``matcher`` and a ``hooks`` list of ``{type = "command", command, timeout}``)."""
    specs: list[HookSpec] = []
    problems: list[str] = []
    if table is None:
        return specs, problems
    if not isinstance(table, Mapping):
        return specs, [f"{source}: 'hooks' must be a table of events; ignored"]
    for event, entries in table.items():
        if event not in EVENTS:
            problems.append(f"{source}: hooks.{event} is not a hook event ({', '.join(EVENTS)}); ignored")
            continue
        if not isinstance(entries, list):
            problems.append(f"{source}: hooks.{event} must be a list of hooks ([[hooks.{event}]]); ignored")
            continue
        for n, entry in enumerate(entries, 1):
            where = f"{source}: hooks.{event} #{n}"
            try:
                if not isinstance(entry, Mapping):
                    raise ValueError("must be a table")
                matcher = _matcher(entry.get("matcher"), claude)
                if event in TOOL_EVENTS and matcher is not None and not matcher.pattern.startswith("mcp") \
                        and not any(matcher.fullmatch(t) for t in OUR_TOOLS):
                    problems.append(f"{where}: the matcher {entry.get('matcher')!r} matches none of agentls's tools "
                                    f"({', '.join(OUR_TOOLS)}, mcp__<server>__<tool>); this hook never runs")
                inner = entry.get("hooks")
                commands = inner if isinstance(inner, list) else [entry]
                for item in commands:
                    if not isinstance(item, Mapping) or item.get("type", "command") != "command":
                        problems.append(f"{where}: only command hooks are run; a {item.get('type') if isinstance(item, Mapping) else 'bad'} entry is ignored")
                        continue
                    command = item.get("command")
                    if not isinstance(command, str) or not command.strip():
                        raise ValueError("needs a 'command' string")
                    specs.append(HookSpec(event, command, matcher, _timeout(item.get("timeout")), source, claude))
            except ValueError as exc:
                problems.append(f"{where}: {exc}; this hook is ignored")
    return specs, problems


def _text(path: Path) -> str | None:
    from ..fileio import read_small

    try:
        return read_small(path, MAX_FILE).decode("utf-8")
    except FileNotFoundError:
        return None


def _toml_hooks(text: str) -> Any:
    data = toml_table(text)
    for table in (data.get("agentls"), data):
        if isinstance(table, Mapping) and "hooks" in table:
            return table["hooks"]
    return None


def _claude_hooks(text: str) -> Any:
    data = json_value(text)
    return data.get("hooks") if isinstance(data, Mapping) else None


# Whether an untrusted file seems to have hooks: enough to tell the user they were not loaded, without
# parsing what the workspace wrote.
_MENTIONS: dict[Callable[[str], Any], re.Pattern[str]] = {
    _toml_hooks: re.compile(r"(?m)^\s*(\[\[?\s*(agentls\s*\.\s*)?hooks\b|hooks\s*=)"),
    _claude_hooks: re.compile(r'"hooks"\s*:')}


def configured(workspace: Path | None, user_config: Path, *, trusted: bool) -> tuple[list[HookSpec], list[str]]:
    """Every hook, user config first, and the problems (each naming its file). An untrusted workspace's files
    are not parsed: a glance says whether they mention hooks, to tell the user those were not loaded."""
    specs: list[HookSpec] = []
    problems: list[str] = []
    files: list[tuple[Path, Callable[[str], Any]]] = [(user_config, _toml_hooks)]
    if workspace is not None:
        files += [(workspace / ".agentls.toml", _toml_hooks), (workspace / ".claude" / "settings.json", _claude_hooks)]
    ignored = []
    for n, (path, reader) in enumerate(files):
        try:
            text = _text(path)
            if text is None:
                continue
            if n > 0 and not trusted:
                if _MENTIONS[reader].search(text):
                    ignored.append(str(path))
                continue
            raw = reader(text)
        except (OSError, UnicodeDecodeError, BadData) as exc:
            problems.append(f"{path}: could not be read ({exc}); its hooks are ignored")
            continue
        if raw is None:
            continue
        found, bad = parse(raw, str(path), claude=reader is _claude_hooks)
        specs += found
        problems += bad
    if ignored:
        problems.append(f"hooks of an untrusted workspace were not loaded: {', '.join(ignored)}. A hook runs any "
                        f"program; to allow them, set trust_workspace_config = true in your user config "
                        f"({user_config}) or put the hooks there")
    return specs, problems
