"""terminal: a command in the editor's terminal when it has one, else in-server in the OS sandbox, always capped."""

from __future__ import annotations

from dataclasses import replace

from .. import events
from ..truncate import cap_text
from ..host import CommandResult, CommandSpec
from ..sandbox.denial import Denial, find_denial
from ..sandbox.session import Plan, outside_key
from ..paths import display
from ..permissions import command_key, dangerous_reason
from .base import JsonObject, Tool, ToolContext, ToolFailure, ToolOutput
from .files import resolve
from .venv import venv_env

MAX_TIMEOUT = 1800.0


async def terminal(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ToolFailure("a non-empty 'command' is required")
    cwd = resolve(ctx, args.get("cwd") or ".")
    if not cwd.is_dir():
        raise ToolFailure(f"cwd {display(ctx.root, cwd)} is not a directory")
    timeout = float(args.get("timeout") or ctx.settings_terminal_timeout)
    timeout = min(max(1.0, timeout), MAX_TIMEOUT)
    danger = dangerous_reason(command, str(ctx.root), str(cwd))
    title = command if len(command) < 120 else command[:117] + "..."
    raw = {"command": command, "cwd": display(ctx.root, cwd)}
    if danger:
        raw["danger"] = danger
    key = command_key(command)
    refusal = await ctx.ask_permission(title, "execute", raw, key, danger is not None, [])
    if refusal:
        return ToolOutput(refusal, is_error=True)
    env = await venv_env(ctx.root)
    program = ctx.sandbox.program_key(command, cwd, env) if ctx.sandbox is not None else None
    plan = await ctx.sandbox.plan(program, dangerous=danger is not None) if ctx.sandbox is not None else Plan(None)
    if plan.refusal:
        return ToolOutput(plan.refusal, is_error=True)
    if plan.notice and ctx.sandbox is not None:
        await ctx.send_update(events.sandbox_update(plan.notice, await ctx.sandbox.status()))
    spec = CommandSpec(
        command=command, cwd=cwd, timeout=timeout, output_limit=max(4096, ctx.output_limit * 2),
        tool_call_id=ctx.tool_call_id, task_id=ctx.task_id, unset_env=ctx.secret_env,
        sandbox=plan.confinement, in_server=plan.in_server, env=env)
    was = await ctx.sandbox.before(spec.sandbox) if ctx.sandbox is not None and spec.sandbox is not None else None
    result = await ctx.host.run_command(spec)
    note = ""
    undone = await ctx.sandbox.after(spec.sandbox, was) \
        if ctx.sandbox is not None and spec.sandbox is not None and was is not None else []
    denial = find_denial(result.output, result.exit_code, spec.sandbox, cwd) \
        if spec.sandbox is not None and result.sandbox and not result.timed_out else None
    if denial is not None and spec.sandbox is not None:
        result, note = await _outside(ctx, spec, result, denial, title, raw, program, danger is not None)
    output, _ = cap_text(result.output, ctx.output_limit)
    if result.timed_out:
        status = f"timed out after {timeout:g}s and was killed"
    elif result.exit_code is None:
        status = f"ended by signal {result.signal or 'unknown'}"
    else:
        status = f"exit code {result.exit_code}"
    cut = " (output truncated)" if result.truncated else ""
    text = f"$ {command}\n[{status}{cut}]\n{output}" if output else f"$ {command}\n[{status}; no output]"
    if note:
        text += f"\n[{note}]"
    if undone:
        text += "\n[agentls undid what git would have run later, outside the sandbox: " + "; ".join(undone) + "]"
    content = [events.terminal_content(result.terminal_id)] if result.terminal_id else \
        [events.text_content(f"$ {command}\n{output}")]
    failed = result.timed_out or result.exit_code not in (0,)
    return ToolOutput(text, is_error=failed, content=content,
                      raw_output={"exitCode": result.exit_code, "timedOut": result.timed_out,
                                  "sandbox": result.sandbox})


async def _outside(ctx: ToolContext, spec: CommandSpec, result: CommandResult, denial: Denial, title: str,
                   raw: JsonObject, program: str | None, dangerous: bool) -> tuple[CommandResult, str]:
    """The sandbox denied the command: ask the user whether to run it again outside (once, or always for
    its program, resolved; never "always" for a dangerous command or one that is not a single plain program
    run: ``program`` None). A refusal runs nothing more; the model reads what the sandbox denied either way."""
    mechanism = result.sandbox or "sandbox"
    why = denial.describe(mechanism)
    what = "a write outside the workspace" if denial.kind == "write" else "network access"
    ask = {**raw, "sandbox": {"mechanism": mechanism, "denied": denial.kind, "evidence": denial.line,
                              "program": program}}
    key = outside_key(program) if program is not None else f"unsandboxed-once:{spec.command}"
    refusal = await ctx.ask_permission(f"{title} (again, outside the sandbox, which denied {what})", "unsandboxed",
                                       ask, key, dangerous or program is None, [])
    if refusal:
        return result, f"{why}. {refusal}"
    again = await ctx.host.run_command(replace(spec, sandbox=None))
    return again, f"{why}. The user allowed running it again outside the sandbox; this is that run's result"


TERMINAL = Tool(
    name="terminal",
    description="Run a shell command in the workspace (in the editor's terminal when it has one). Returns the exit "
                "code and the output (capped). Use it for tests, builds, git and other CLIs; not for reading or "
                "editing files.",
    parameters={"type": "object", "properties": {
        "command": {"type": "string", "description": "The shell command"},
        "cwd": {"type": "string", "description": "Working directory relative to the workspace root"},
        "timeout": {"type": "number", "minimum": 1, "maximum": MAX_TIMEOUT,
                    "description": "Seconds before the command is killed (default 120)"}},
        "required": ["command"], "additionalProperties": False},
    kind="execute", run=terminal, timeout=None,
    paths=lambda a: [a["cwd"]] if isinstance(a.get("cwd"), str) and a.get("cwd") else [],
    title=lambda a: str(a.get("command", ""))[:120],
    short="Run a shell command in the workspace.", small_arguments=("command",),
    guide="Run tests, builds and other commands with `terminal`; check the exit code and output, and run the "
          "relevant tests after a change when the project has them. Avoid long-running or interactive commands.",
)
