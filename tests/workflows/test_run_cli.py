"""``agentls run`` with command files, hooks and memory (docs/workflows.md): a real process, the scripted model."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import hook_program, hooks_toml, write


async def _run(srv: ScriptedServer, ws: Path, home: Path, prompt: str) -> tuple[int, str, str]:
    env = {**os.environ, "AGENTLS_DATA_DIR": str(home / "data"), "AGENTLS_CONFIG": str(home / "config.toml"),
           "AGENTLS_API_KEY": "k", "AGENTLS_SANDBOX": "off"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls.server", "run", "-w", str(ws), "--base-url", srv.openai_url, "-m", "m",
        "--no-persist", "--approval", "yolo", prompt, env=env, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_commands_hooks_and_memory_in_a_headless_run(srv: ScriptedServer, ws: Path, home: Path) -> None:
    write(ws / ".claude/commands/fix.md", "---\ndescription: Fix an issue\n---\nFix issue #$1 ($ARGUMENTS)\n")
    write(home / "commands/hello.md", "Greet $1\n")
    guard = hook_program(home, "guard", "print('no deleting', file=sys.stderr)\nsys.exit(2)\n")
    context = hook_program(home, "context", "print('HOOK-CONTEXT for ' + event['prompt'][:20])\n")
    write(home / "config.toml", hooks_toml([("PreToolUse", guard, "terminal", 5),
                                            ("UserPromptSubmit", context, None, 5)]))
    srv.push(tools(call("terminal", {"command": "rm README.md"}),
                   call("memory", {"action": "add", "content": "Prefers short answers"})), text("could not delete"))
    code, out, _ = await _run(srv, ws, home, "/fix 42 urgently")
    assert code == 0 and "could not delete" in out
    sent = srv.requests[0].last_user_text or ""
    assert sent.startswith("Fix issue #42 (42 urgently)") and "HOOK-CONTEXT for Fix issue #42" in sent
    assert (ws / "README.md").exists()
    assert any("no deleting" in str(m.get("content")) for m in srv.requests[1].messages)
    srv.push(text("hi"))
    code, out, _ = await _run(srv, ws, home, "/hello Ada")
    assert code == 0 and (srv.requests[-1].last_user_text or "").startswith("Greet Ada")
    assert "Prefers short answers" in (srv.requests[-1].system or "")
    code, out, _ = await _run(srv, ws, home, "/memory")
    assert code == 0 and "Prefers short answers" in out and str(home / "data/memory.md") in out


async def test_a_problem_is_printed_once(srv: ScriptedServer, ws: Path, home: Path) -> None:
    write(ws / ".claude/commands/bad.md", "---\ndescription: never closed\nbody\n")
    srv.push(text("hi"))
    code, out, err = await _run(srv, ws, home, "hello")
    assert code == 0 and (out + err).count("never closed") == 1, (out, err)
