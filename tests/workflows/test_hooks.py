"""Hooks with Claude Code's events and JSON, run as real programs (docs/workflows.md, "Hooks")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import Make, alive, hook_program, hooks_toml, said, write


def _config(home: Path, *entries: tuple[str, str, str | None, float | None]) -> None:
    write(home / "config.toml", hooks_toml(list(entries)))


def _results(agent: object) -> list[str]:
    return [str(m["content"]) for m in agent.messages if m.get("role") == "tool"]  # type: ignore[attr-defined]


async def test_pre_tool_use_exit_2_blocks_and_the_model_reads_why(make: Make, srv: ScriptedServer, ws: Path,
                                                                  home: Path) -> None:
    guard = hook_program(home, "guard", (
        "open(os.environ['AGENTLS_PROJECT_DIR'] + '/../event.json', 'w').write(json.dumps(event))\n"
        "if 'push' in event['tool_input'].get('command', ''):\n"
        "    print('pushing is not allowed here', file=sys.stderr); sys.exit(2)\n"))
    _config(home, ("PreToolUse", guard, "terminal|write_file", 10))
    agent = make()
    srv.push(tools(call("terminal", {"command": "touch pushed && git push"})), tools(call("terminal", {"command": "touch ran"})),
             text("ok"))
    await agent.run_conversation("publish")
    out = _results(agent)
    assert "PreToolUse hook blocked" in out[0] and "pushing is not allowed here" in out[0]
    assert not (ws / "pushed").exists() and (ws / "ran").exists()
    assert any("pushing is not allowed here" in str(m.get("content")) for m in srv.requests[1].messages)
    event = json.loads((ws.parent / "event.json").read_text())
    assert event["hook_event_name"] == "PreToolUse" and event["tool_name"] == "terminal"
    assert event["tool_input"] == {"command": "touch ran"} and event["cwd"] == str(ws)
    assert event["session_id"] == agent.session_id


async def test_user_prompt_submit_context_reaches_the_model_and_exit_2_refuses(make: Make, srv: ScriptedServer,
                                                                                home: Path) -> None:
    hook = hook_program(home, "prompt", (
        "if 'forbidden' in event['prompt']:\n    print('not that word', file=sys.stderr); sys.exit(2)\n"
        "print('CONTEXT: the sprint ends Friday')\n"))
    start = hook_program(home, "start", "print('SESSION-START ' + event['source'])\n")
    _config(home, ("UserPromptSubmit", hook, None, None), ("SessionStart", start, None, None))
    agent = make()
    srv.push(text("ok"), text("ok"))
    await agent.run_conversation("plan the week")
    sent = srv.requests[0].last_user_text or ""
    assert sent.startswith("plan the week") and "CONTEXT: the sprint ends Friday" in sent
    assert "SESSION-START startup" in sent
    assert "the sprint ends Friday" not in (srv.requests[0].system or "")
    refused = await agent.run_conversation("say the forbidden word")
    assert "not that word" in (refused.final_response or "") and len(srv.requests) == 1
    await agent.run_conversation("again")
    assert "SESSION-START" not in (srv.requests[-1].last_user_text or "")  # once per session


async def test_post_tool_use_sees_each_tool(make: Make, srv: ScriptedServer, ws: Path, home: Path) -> None:
    log = home / "tools.log"
    hook = hook_program(home, "post", (
        f"open({str(log)!r}, 'a').write(event['tool_name'] + ' ' + str(event['tool_response']['is_error']) + '\\n')\n"
        "if event['tool_name'] == 'list_dir':\n    print('LIST-NOTE for the model', file=sys.stderr); sys.exit(2)\n"))
    _config(home, ("PostToolUse", hook, None, None))
    agent = make()
    srv.push(tools(call("read_file", {"path": "README.md"}), call("list_dir", {"path": "."}),
                   call("terminal", {"command": "true"}), call("read_file", {"path": "missing.txt"})), text("ok"))
    await agent.run_conversation("look")
    assert sorted(log.read_text().splitlines()) == sorted(
        ["read_file False", "list_dir False", "terminal False", "read_file True"])
    assert "LIST-NOTE for the model" in _results(agent)[1]


async def test_json_decisions_allow_and_deny(make: Make, srv: ScriptedServer, ws: Path, home: Path) -> None:
    hook = hook_program(home, "decide", (
        "decision = 'deny' if 'rm ' in event['tool_input'].get('command', '') else 'allow'\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'permissionDecision': decision,"
        " 'permissionDecisionReason': 'policy says ' + decision}}))\n"))
    _config(home, ("PreToolUse", hook, "terminal", None))
    write(ws / "keep.txt", "x")
    agent = make(approval="ask")  # this host cannot ask: a command would otherwise be refused
    srv.push(tools(call("terminal", {"command": "touch allowed"}), call("terminal", {"command": "rm keep.txt"})),
             text("ok"))
    await agent.run_conversation("go")
    out = _results(agent)
    assert (ws / "allowed").exists() and (ws / "keep.txt").exists()
    assert "policy says deny" in out[1]


async def test_stop_hook_continues_bounded(make: Make, srv: ScriptedServer, home: Path) -> None:
    hook = hook_program(home, "stop", (
        "if not event['stop_hook_active']:\n    print('also run the tests', file=sys.stderr); sys.exit(2)\n"))
    _config(home, ("Stop", hook, None, None))
    agent = make()
    srv.push(text("first answer"), text("tests pass"))
    result = await agent.run_conversation("fix it")
    assert result.final_response == "tests pass" and len(srv.requests) == 2
    assert "also run the tests" in (srv.requests[1].last_user_text or "")
    forever = hook_program(home, "forever", "print('never done', file=sys.stderr); sys.exit(2)\n")
    _config(home, ("Stop", forever, None, None))
    updates: list[dict[str, object]] = []
    agent = make(updates=updates, max_iterations=10)
    srv.clear()
    srv.push(*[text(f"answer {i}") for i in range(10)])
    result = await agent.run_conversation("go")
    assert len(srv.requests) == 4 and result.final_response == "answer 3"  # three continues, then it ends
    assert "asked to continue 3 times" in said(updates)  # type: ignore[arg-type]


async def test_a_hung_hook_is_killed_with_its_children_and_the_turn_goes_on(make: Make, srv: ScriptedServer,
                                                                           ws: Path, home: Path) -> None:
    pids = home / "pids"
    hook = hook_program(home, "hang", (
        "import subprocess\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "time.sleep(300)\n"))
    _config(home, ("PreToolUse", hook, None, 1))
    updates: list[dict[str, object]] = []
    agent = make(updates=updates)
    srv.push(tools(call("terminal", {"command": "touch ran"})), text("ok"))
    result = await agent.run_conversation("go")
    assert result.final_response == "ok" and (ws / "ran").exists()
    assert "timed out after 1s" in said(updates)  # type: ignore[arg-type]
    assert not any(alive(int(p)) for p in pids.read_text().split())


async def test_a_flood_of_output_and_a_daemon_do_not_hold_the_turn(make: Make, srv: ScriptedServer,
                                                                  home: Path) -> None:
    pidfile = home / "daemon.pid"
    flood = hook_program(home, "flood", (
        "chunk = 'x' * (1 << 20)\nfor _ in range(100):\n    sys.stdout.write(chunk)\n"))
    daemon = hook_program(home, "daemon", (
        "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        f"        open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n        time.sleep(300)\n    os._exit(0)\n"
        "print('daemon started')\n"))
    _config(home, ("UserPromptSubmit", flood, None, 30), ("UserPromptSubmit", daemon, None, 30))
    agent = make()
    srv.push(text("ok"))
    result = await agent.run_conversation("go")
    assert result.final_response == "ok"
    sent = srv.requests[0].last_user_text or ""
    assert "daemon started" in sent and len(sent) < 30_000
    assert not alive(int(pidfile.read_text()))


async def test_workspace_hooks_need_trust(make: Make, srv: ScriptedServer, ws: Path, home: Path) -> None:
    marker = hook_program(home, "mark", "print('WORKSPACE-HOOK')\n")
    write(ws / ".agentls.toml", hooks_toml([("UserPromptSubmit", marker, None, None)]))
    write(ws / ".claude/settings.json", json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": marker.replace("mark", "mark") + " --claude"}]}]}}))
    updates: list[dict[str, object]] = []
    untrusted = make(updates=updates)
    srv.push(text("ok"), text("ok"))
    await untrusted.run_conversation("hi")
    assert "WORKSPACE-HOOK" not in (srv.requests[0].last_user_text or "")
    assert "hooks of an untrusted workspace were not loaded" in said(updates)  # type: ignore[arg-type]
    trusted = make(trusted=True)
    await trusted.run_conversation("hi")
    assert (srv.requests[1].last_user_text or "").count("WORKSPACE-HOOK") == 2  # .agentls.toml and Claude's file


async def test_bad_hook_config_and_a_crashing_hook_are_warnings(make: Make, srv: ScriptedServer, home: Path) -> None:
    crash = hook_program(home, "crash", "raise SystemExit(1)\n")
    write(home / "config.toml", hooks_toml([("PreToolUse", crash, None, None), ("PreToolUse", "true", "([", None),
                                            ("NoSuchEvent", "true", None, None)]))
    updates: list[dict[str, object]] = []
    agent = make(updates=updates)
    srv.push(tools(call("list_dir", {"path": "."})), text("ok"))
    result = await agent.run_conversation("go")
    shown = said(updates)  # type: ignore[arg-type]
    assert result.final_response == "ok" and "README.md" in _results(agent)[0]
    assert "not a valid regular expression" in shown and "NoSuchEvent is not a hook event" in shown
    assert "exited with code 1" in shown


async def test_claude_code_hook_files_use_claude_codes_tool_names(make: Make, srv: ScriptedServer, ws: Path,
                                                                  home: Path) -> None:
    guard = hook_program(home, "cc_guard", "if event['tool_name'] == 'Bash' and 'rm ' in event['tool_input']"
                                           "['command']:\n    print('no rm', file=sys.stderr)\n    sys.exit(2)\n"
                                           "if event['tool_name'] == 'Write':\n    print('path ' + "
                                           "event['tool_input']['file_path'], file=sys.stderr)\n    sys.exit(2)\n")
    entry = [{"type": "command", "command": guard}]
    write(ws / ".claude/settings.json", json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": entry}, {"matcher": "Edit|Write", "hooks": entry},
        {"matcher": "Nonexistent", "hooks": entry}]}}))
    write(home / "config.toml", "trust_workspace_config = true\n")
    updates: list[dict[str, Any]] = []
    agent = make(trusted=True, updates=updates)
    srv.push(tools(call("terminal", {"command": "rm README.md"}), call("write_file", {"path": "x.txt", "content": "x"})),
             text("done"))
    await agent.run_conversation("go")
    results = [str(m["content"]) for m in agent.messages if m.get("role") == "tool"]
    assert (ws / "README.md").exists() and "no rm" in results[0]
    assert not (ws / "x.txt").exists() and "path x.txt" in results[1]
    told = said(updates)
    assert told.count("'Nonexistent' matches none of agentls's tools") == 1
