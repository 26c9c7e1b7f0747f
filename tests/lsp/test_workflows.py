"""Command files, skills and hooks through the LSP face (docs/workflows.md): ``agent/listCommands`` and
``/name args`` in ``agent/turn``."""

from __future__ import annotations

import sys
from pathlib import Path

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import DATA_DIR, initialize, new_session, request
from .editor import Editor


def _write(path: Path, text_: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text_)


async def test_commands_from_three_places_are_listed_and_expand(editor: Editor, srv: ScriptedServer,
                                                                workspace: Path) -> None:
    _write(workspace / ".agentls/commands/review.md", "---\ndescription: Review a file\nargument-hint: <file>\n---\n"
                                                     "Review $1 ($ARGUMENTS)\n")
    _write(workspace / ".claude/commands/frontend/lint.md", "Lint $ARGUMENTS\n")
    _write(workspace / ".claude/skills/tidy/SKILL.md", "---\nname: tidy\ndescription: Tidy imports\n---\nSort them.\n")
    _write(workspace / ".claude/commands/broken.md", "---\nkey: [unclosed\n---\nbody\n")
    user = DATA_DIR / "commands" / "lsp-greet.md"  # beside the server's user config (AGENTLS_CONFIG)
    _write(user, "Say hello to $1\n")
    try:
        await initialize(editor, srv, workspace)
        before = await request(editor, "agent/listCommands", {})  # no session yet: the workspace root's
        assert {"review", "frontend:lint", "tidy", "lsp-greet", "memory"} <= {c["name"] for c in before["commands"]}
        sid = await new_session(editor)
        listed = await request(editor, "agent/listCommands", {"sessionId": sid})
        by_name = {c["name"]: c for c in listed["commands"]}
        assert by_name["review"]["argumentHint"] == "<file>" and by_name["review"]["scope"] == "workspace"
        assert by_name["frontend:lint"]["kind"] == "command" and by_name["tidy"]["kind"] == "skill"
        assert by_name["lsp-greet"]["scope"] == "user" and by_name["memory"]["kind"] == "builtin"
        assert any("broken.md" in p for p in listed["problems"])
        for prompt, expected in (("/review app.py now", "Review app.py (app.py now)"),
                                 ("/frontend:lint src", "Lint src"), ("/lsp-greet Ada", "Say hello to Ada")):
            srv.push(text("ok"))
            await request(editor, "agent/turn", {"sessionId": sid, "prompt": prompt})
            assert (srv.requests[-1].last_user_text or "").startswith(expected)
        srv.push(text("ok"))
        await request(editor, "agent/turn", {"sessionId": sid, "prompt": "/tidy"})
        assert "Sort them." in (srv.requests[-1].last_user_text or "")
        assert "Sort them." not in (srv.requests[-1].system or "")
        shown = await request(editor, "agent/turn", {"sessionId": sid, "prompt": "/memory"})
        assert "User memory:" in shown["finalResponse"] and str(workspace / ".agentls/memory.md") in shown["finalResponse"]
    finally:
        user.unlink()


async def test_a_trusted_workspace_hook_blocks_a_command(editor: Editor, srv: ScriptedServer,
                                                         workspace: Path) -> None:
    guard = workspace / "guard.py"
    guard.write_text("import json, sys\nevent = json.load(sys.stdin)\nprint('no rm here', file=sys.stderr)\n"
                     "sys.exit(2 if 'rm ' in event['tool_input']['command'] else 0)\n")
    _write(workspace / ".agentls.toml", f'[[hooks.PreToolUse]]\nmatcher = "terminal"\n'
                                        f'command = "{sys.executable} {guard}"\n')
    await initialize(editor, srv, workspace, options={"trustWorkspaceConfig": True})
    sid = await new_session(editor)
    srv.push(tools(call("terminal", {"command": "rm app.py"})), text("blocked"))
    await request(editor, "agent/turn", {"sessionId": sid, "prompt": "delete app.py"})
    assert (workspace / "app.py").exists()
    assert any("no rm here" in str(m.get("content")) for m in srv.requests[-1].messages)
