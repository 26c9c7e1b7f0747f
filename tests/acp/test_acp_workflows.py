"""Command files, skills, hooks and memory through ACP (docs/workflows.md): ``available_commands_update``
lists them (sent again when the files change), ``/name args`` expands, ``/memory`` shows both memories."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp_harness.agent import Agent

from agentls.agent.scripted import ScriptedServer, call, text, tools

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _write(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


def _command_lists(agent: Agent, sid: str) -> list[list[dict[str, Any]]]:
    return [u["availableCommands"] for u in agent.client.updates[sid] if u["sessionUpdate"] == "available_commands_update"]


async def _listed(agent: Agent, sid: str, count: int) -> list[dict[str, Any]]:
    for _ in range(500):
        lists = _command_lists(agent, sid)
        if len(lists) >= count:
            return lists[count - 1]
        await asyncio.sleep(0.01)
    raise AssertionError(f"no available_commands_update #{count}")


async def test_three_sources_listed_expanded_and_refreshed(frames_ok: Agent, scripted: ScriptedServer,
                                                           ws: Path) -> None:
    agent = frames_ok
    _write(ws / ".agentls/commands/review.md", "---\ndescription: Review a file\nargument-hint: <file>\n---\n"
                                               "Review $1 with care: $ARGUMENTS\n")
    _write(ws / ".claude/commands/frontend/lint.md", "---\ndescription: Lint\n---\nLint $ARGUMENTS\n")
    _write(ws / ".claude/commands/compact.md", "a shadow of the built-in\n")
    user = _write(agent.home / "commands/acp-greet.md", "Say hello to $1\n")
    try:
        sid = await agent.new_session(ws)
        listed = {c["name"]: c for c in await _listed(agent, sid, 1)}
        assert listed["review"]["input"] == {"hint": "<file>"} and listed["review"]["description"] == "Review a file"
        assert {"frontend:lint", "acp-greet", "compact", "memory"} <= set(listed)
        assert listed["compact"]["description"].startswith("Summarize")  # the built-in kept
        for prompt, expected in (("/review a.py quickly", "Review a.py with care: a.py quickly"),
                                 ("/frontend:lint src", "Lint src"), ("/acp-greet Ada", "Say hello to Ada")):
            scripted.push(text("ok"))
            await agent.conn.prompt(session_id=sid, prompt=[text_block(prompt)])
            assert scripted.requests[-1].last_user_text == expected
        assert agent.client.text(sid).count("is a built-in command") == 1
        _write(ws / ".agentls/commands/added.md", "Added $1\n")
        scripted.push(text("ok"))
        await agent.conn.prompt(session_id=sid, prompt=[text_block("/added x")])
        assert scripted.requests[-1].last_user_text == "Added x"
        refreshed = {c["name"] for c in await _listed(agent, sid, 2)}
        assert "added" in refreshed
    finally:
        user.unlink()


async def test_skill_hook_and_memory(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    _write(ws / ".agents/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy the app\n---\n"
                                                 "DEPLOY-STEPS: build, then ship.\n")
    sid = await agent.new_session(ws)
    scripted.push(tools(call("skill", {"name": "deploy"}),
                        call("memory", {"action": "add", "content": "Deploys go through staging", "scope": "project"})),
                  text("done"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("deploy it")])
    first = scripted.requests[0]
    assert "deploy: Deploy the app" in (first.system or "") and "DEPLOY-STEPS" not in (first.system or "")
    results = [str(m.get("content")) for m in scripted.requests[1].messages if m.get("role") == "tool"]
    assert "DEPLOY-STEPS" in results[0] and "next session" in results[1]
    assert "Deploys go through staging" in (ws / ".agentls/memory.md").read_text()
    await agent.conn.prompt(session_id=sid, prompt=[text_block("/memory")])
    shown = agent.client.text(sid)
    assert "Deploys go through staging" in shown and str(ws / ".agentls/memory.md") in shown
    other = await agent.new_session(ws)
    scripted.push(text("hi"))
    await agent.conn.prompt(session_id=other, prompt=[text_block("hello")])
    assert "Deploys go through staging" in (scripted.requests[-1].system or "")


async def test_an_untrusted_workspace_hook_does_not_run(frames_ok: Agent, scripted: ScriptedServer, ws: Path) -> None:
    agent = frames_ok
    marker = ws / "ran"
    _write(ws / ".agentls.toml", f'[[hooks.UserPromptSubmit]]\ncommand = "{sys.executable} -c \'open(\\"{marker}\\", \\"w\\")\'"\n')
    sid = await agent.new_session(ws)
    scripted.push(text("ok"))
    await agent.conn.prompt(session_id=sid, prompt=[text_block("hi")])
    assert not marker.exists()
    assert "hooks of an untrusted workspace were not loaded" in agent.client.text(sid)
