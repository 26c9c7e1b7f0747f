"""``agentls run``: one turn, headless. Streams to stderr, prints the answer on stdout, and ends with a
footer on stderr that says what the turn really did (agent/footer.py).

Exit codes (README "Exit codes"):

- 0: completed: the model answered and every edit it attempted landed
- 1: failed: a model call failed for good, or the model kept answering with nothing, or the session is
  running a turn in another process
- 2: bad usage or configuration (a session store that cannot be used)
- 3: the step budget ran out before the model answered
- 4: completed, but an edit did not land (an edit_file/write_file failed and no later edit of that file made it
  good, or an edit was refused), or a small model's change request changed no file (``unmade_change``)
- 130: interrupted (Ctrl-C: the first one interrupts cleanly; a second one aborts)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from agentls.agent.config import ConfigError, load_settings
from agentls.agent.events import sandbox_notice
from agentls.agent.footer import edits_failed, footer
from agentls.agent.result import ExitReason, TurnResult
from agentls.agent.types import SessionUpdate

from .visible import json_safe, visible

EXIT_COMPLETED, EXIT_FAILED, EXIT_USAGE, EXIT_BUDGET, EXIT_EDITS_FAILED, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130


def exit_code(result: TurnResult) -> int:
    if result.interrupted:
        return EXIT_INTERRUPTED
    if result.exit_reason is ExitReason.BUDGET_EXHAUSTED:
        return EXIT_BUDGET
    if not result.completed:
        return EXIT_FAILED
    return EXIT_EDITS_FAILED if edits_failed(result) else EXIT_COMPLETED


def _indent(update: SessionUpdate) -> str:
    """A subagent's tool calls are indented under its delegate_task call."""
    nested = ((update.get("_meta") or {}).get("agentls") or {}).get("parentToolCallId")
    return "      " if nested else "  "


class Renderer:
    """Human-readable progress on stderr: streamed text, one line per tool call, a spinner while waiting."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, stream: Any, quiet: bool) -> None:
        self.out = stream
        self.quiet = quiet
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.titles: dict[str, str] = {}
        self.children: list[dict[str, Any]] = []  # what each subagent did (docs/loop.md §9.9), for --json
        self.midline = False
        self._spin: asyncio.Task[None] | None = None

    def _write(self, text: str) -> None:
        if not self.quiet:
            self.out.write(visible(text))
            self.out.flush()

    def _newline(self) -> None:
        if self.midline:
            self._write("\n")
            self.midline = False

    async def __call__(self, update: SessionUpdate) -> None:
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            text = update["content"].get("text", "")
            self._write(text)
            self.midline = not text.endswith("\n")
        elif kind == "tool_call":
            self._newline()
            self.titles[update["toolCallId"]] = update.get("title", "")
            self._write(f"{_indent(update)}→ {update.get('title', '')}\n")
        elif kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
            mark = "✓" if update["status"] == "completed" else "✗"
            self._write(f"{_indent(update)}{mark} {self.titles.get(update['toolCallId'], '')}\n")
            raw = update.get("rawOutput")
            if isinstance(raw, dict) and isinstance(raw.get("children"), list):  # delegate_task's subagents
                self.children.extend(raw["children"])
        elif kind == "plan":
            self._newline()
            for entry in update.get("entries", []):
                box = {"completed": "[x]", "in_progress": "[~]"}.get(entry.get("status"), "[ ]")
                self._write(f"  {box} {entry.get('content', '')}\n")
        elif kind == "compaction_update" and update.get("status") == "completed":
            self._newline()
            self._write("  (context compacted)\n")
        elif kind == "session_info_update" and isinstance(sandbox := sandbox_notice(update), str):
            self._newline()
            self.out.write(visible(sandbox) + "\n")  # a warning: shown even with --quiet
            self.out.flush()

    async def spin(self) -> None:
        if not self.tty or self.quiet:
            return
        i = 0
        while True:
            await asyncio.sleep(0.1)
            if not self.midline:
                self.out.write(f"\r{self.FRAMES[i % len(self.FRAMES)]} working…\r")
                self.out.flush()
            i += 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentls run", description="Run one agent turn headless.")
    p.add_argument("prompt", help='the request; "-" reads it from stdin')
    p.add_argument("--workspace", "-w", default=".", help="workspace root (default: the current directory)")
    p.add_argument("--model", "-m")
    p.add_argument("--base-url")
    p.add_argument("--provider", choices=["openai", "anthropic", "local"])
    p.add_argument("--api-key-env", help="name of the env var holding the API key")
    p.add_argument("--approval", choices=["ask", "auto-edit", "yolo"],
                   help="default auto-edit here: edits apply, commands need --approval yolo")
    p.add_argument("--max-iterations", type=int)
    p.add_argument("--sandbox", choices=["auto", "strict", "off"],
                   help="the OS sandbox for commands (default auto: on wherever a mechanism works)")
    p.add_argument("--sandbox-network", choices=["off", "on"], help="let sandboxed commands use the network")
    p.add_argument("--no-stream", action="store_true", help="ask the model for whole responses")
    p.add_argument("--session", help="continue this stored session")
    p.add_argument("--fork", metavar="ID", help="continue a copy of this stored session (it stays as it is)")
    p.add_argument("--no-persist", action="store_true", help="do not store the session")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON on stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    return p


async def _run(ns: argparse.Namespace) -> int:
    from agentls.agent.disk_host import DiskHost
    from agentls.agent.resolve import agent_from_settings, resolve_model
    from agentls.agent.sessions.lease import SessionBusy
    from agentls.agent.sessions.schema import StoreError

    workspace = Path(ns.workspace).resolve()
    if not workspace.is_dir():
        print(visible(f"agentls: workspace {workspace} is not a directory"), file=sys.stderr)
        return 2
    overrides = {"model": ns.model, "base-url": ns.base_url, "provider": ns.provider, "api-key-env": ns.api_key_env,
                 "approval": ns.approval, "max-iterations": ns.max_iterations,
                 "stream": False if ns.no_stream else None, "sandbox": ns.sandbox,
                 "sandbox-network": ns.sandbox_network}
    try:
        settings = load_settings(workspace, overrides, overrides_source="command line")
        if ns.approval is None and "approval" not in settings.sources:
            from agentls.agent.config import merge

            settings = merge(settings, {"approval": "auto-edit"}, "agentls run default")
        resolved = resolve_model(settings)
    except ConfigError as exc:
        print(visible(f"agentls: {exc}"), file=sys.stderr)
        return 2
    if not ns.quiet:
        from .runtime.notices import session_notices

        for notice in session_notices(settings):
            print(visible(notice.text) + "\n", file=sys.stderr)
    prompt = sys.stdin.read() if ns.prompt == "-" else ns.prompt
    renderer = Renderer(sys.stderr, ns.quiet)
    session_db = None
    if not ns.no_persist:
        from agentls.agent.sessions.store import default_db_path

        session_db = default_db_path()
    if ns.fork is not None:
        if session_db is None or ns.session is not None:
            print(visible("agentls: --fork cannot be used with --session or --no-persist"), file=sys.stderr)
            return 2
        try:
            ns.session = await _fork(session_db, ns.fork, ns.quiet)
        except StoreError as exc:
            print(visible(f"agentls: {exc}"), file=sys.stderr)
            return 2
        if ns.session is None:
            return 2
    extra: dict[str, Any] = {}
    if resolved.provider == "local" and not ns.quiet:
        from agentls.agent.local.cli import ProgressBar

        extra["local_progress"] = ProgressBar()
    agent = agent_from_settings(settings, workspace=workspace, host=DiskHost(workspace, renderer),
                                session_id=ns.session, session_db=session_db, **extra)
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    presses = 0

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses == 1 and agent.interrupt():
            renderer._write("\n[interrupting… press Ctrl-C again to abort]\n")
        elif task is not None:
            task.cancel()

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    spinner = asyncio.ensure_future(renderer.spin())
    from agentls.agent.mcp.build import build_manager

    mcp = build_manager(agent.registry, workspace, trusted=settings.trust_workspace_config)
    agent.sandbox.protect_servers([c.spec for c in mcp.connections])  # what they run stays read-only
    try:
        async with agent:
            await _start_mcp(mcp, renderer)
            result = await agent.run_conversation(prompt)
    except asyncio.CancelledError:
        renderer._write("\n[aborted]\n")
        return 130
    except SessionBusy as exc:  # another process is running a turn of --session
        renderer._newline()
        print(visible(f"agentls: {exc}"), file=sys.stderr)
        return 1
    except StoreError as exc:  # the session store cannot be used (its file is named)
        renderer._newline()
        print(visible(f"agentls: {exc}"), file=sys.stderr)
        return 2
    except Exception as exc:  # never a traceback and a hang: say what failed, for which session, and end
        renderer._newline()
        where = f"session {ns.session}: " if ns.session else ""
        print(visible(f"agentls: {where}{type(exc).__name__}: {exc}"), file=sys.stderr)
        logging.getLogger("agentls.run").debug("the turn failed", exc_info=True)
        return 1
    finally:
        spinner.cancel()
        loop.remove_signal_handler(signal.SIGINT)
        await mcp.aclose()
    renderer._newline()
    if ns.json:
        print(json_safe(json.dumps({**result.to_json(), "children": renderer.children}, ensure_ascii=False, indent=2,
                                   default=str)))
    elif result.final_response and not (sys.stdout.isatty() and renderer.tty and not ns.quiet):
        print(visible(result.final_response))  # on a terminal the streamed text already showed it
    if result.error is not None:
        print(visible(f"agentls: {result.error['category']}: {result.error['message']}"), file=sys.stderr)
    print(visible(footer(result)), file=sys.stderr)
    return exit_code(result)


async def _start_mcp(mcp: Any, renderer: Renderer) -> None:
    """One turn, so its MCP servers are waited for (each up to its start timeout) before it starts."""
    for problem in mcp.problems:
        renderer._write(f"agentls: {problem}\n")
    if not mcp.connections:
        return
    mcp.start()
    await mcp.wait_ready()
    for status in mcp.status():
        if status["state"] != "ready":
            renderer._write(f"agentls: MCP server {status['name']} {status['state']}: {status['lastError']}\n")


def main(argv: list[str]) -> int:
    from .runtime.logs import setup_logging

    ns = build_parser().parse_args(argv)
    setup_logging(os.environ.get("AGENTLS_LOG_FILE") or None, os.environ.get("AGENTLS_LOG_LEVEL") or "WARNING",
                  terse=True)
    try:
        return asyncio.run(_run(ns))
    except KeyboardInterrupt:
        return 130


async def _fork(db: Path, source: str, quiet: bool) -> str | None:
    """``--fork``: the stored session copied into a new one (server/runtime/tree.py's rules); its id."""
    import uuid

    from agentls.agent.sessions.store import SessionStore
    from .runtime.tree import fork_title

    async with SessionStore(db) as store:
        record = await store.get_session(source)
        if record is None:
            print(visible(f"agentls: there is no stored session {source!r} (see `agentls sessions`)"), file=sys.stderr)
            return None
        new_id = uuid.uuid4().hex
        await store.fork_session(source, new_id, title=fork_title(record.title))
    if not quiet:
        print(visible(f"agentls: forked session {source} as {new_id}"), file=sys.stderr)
    return new_id


def sessions_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="agentls sessions", description="List stored sessions.")
    p.add_argument("--cwd")
    p.add_argument("--query", "-q")
    p.add_argument("--limit", type=int, default=20)
    ns = p.parse_args(argv)

    async def go() -> int:
        from agentls.agent.sessions.schema import StoreError
        from agentls.agent.sessions.store import SessionStore, default_db_path

        try:
            async with SessionStore(default_db_path()) as store:
                rows, _ = await store.list_sessions(cwd=ns.cwd, query=ns.query, limit=ns.limit)
        except StoreError as exc:
            print(visible(f"agentls: {exc}"), file=sys.stderr)
            return 2
        for r in rows:
            print(visible(f"{r.id}  {r.updated_at}  {r.cwd}  {r.title or '(untitled)'}"))
        return 0

    return asyncio.run(go())


def sandbox_main(argv: list[str]) -> int:
    """``agentls sandbox``: the active mechanism (or why there is none) and the settings, for a workspace."""
    p = argparse.ArgumentParser(prog="agentls sandbox", description="Show how commands are sandboxed here.")
    p.add_argument("--workspace", "-w", default=".", help="workspace root (default: the current directory)")
    p.add_argument("--json", action="store_true", help="print the status as JSON")
    ns = p.parse_args(argv)
    workspace = Path(ns.workspace).resolve()
    try:
        settings = load_settings(workspace)
    except ConfigError as exc:
        print(visible(f"agentls: {exc}"), file=sys.stderr)
        return 2
    from agentls.agent.sandbox.detect import detect
    from agentls.agent.sandbox.policy import config_from
    from agentls.agent.sandbox.session import CommandSandbox

    sandbox = CommandSandbox(config_from(settings.sandbox, settings.sandbox_network, settings.sandbox_writable),
                             workspace)

    async def status() -> dict[str, Any]:
        return {**await sandbox.status(), "skipped": list((await detect()).skipped)}

    found = asyncio.run(status())
    for warning in settings.warnings:
        print(visible(f"agentls: {warning}"), file=sys.stderr)
    if ns.json:
        print(json.dumps(found, indent=2))
        return 0
    print(visible(f"sandbox: {found['mode']} (network {found['network']})"))
    print(visible(f"mechanism: {found['mechanism'] or 'none: commands run unconfined'} ({found['detail']})"))
    tmp = {"private": ", and /tmp (private to each session)", "shared": ", and /tmp (the host's, shared)"}
    print(visible("writable: " + ", ".join(found["writable"]) + tmp.get(found["tmp"], "")))
    if found["mechanism"]:
        print(visible("read-only inside (what runs later, outside the sandbox): " + ", ".join(found["protected"])))
    for path in found["unprotected"]:
        print(visible(f"NOT protected: {path} holds a writable path, so commands can change it (docs/sandbox.md)"))
    for reason in found["skipped"]:
        print(visible(f"not used: {reason}"))
    return 0
