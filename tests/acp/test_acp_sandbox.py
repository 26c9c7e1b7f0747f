"""The OS sandbox through the ACP face: in-process commands run confined; a denied command asks through
``session/request_permission`` whether to run it again outside (a refusal runs nothing more); a workspace
``sandbox = "strict"`` keeps commands out of the client's ``terminal/*``; without a mechanism a
``session_info_update`` says so once."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from acp import text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities
from acp_harness.agent import Agent, agent_env, start_agent, write_config

from agentls.agent.sandbox.detect import ONLY_ENV, detect
from agentls.agent.scripted import ScriptedServer, call, text, tools

pytestmark = pytest.mark.asyncio(loop_scope="module")

NO_TERMINAL = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                                 terminal=False)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(scripted: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Agent]:
    """An agent whose client has no terminal: commands run in the agent's process, sandboxed."""
    home = tmp_path_factory.mktemp("agent")
    async with start_agent(home, agent_env(scripted, home), caps=NO_TERMINAL) as agent:
        yield agent
    agent.check_frames()


@pytest.fixture
def fresh(plain: Agent, scripted: ScriptedServer) -> Iterator[Agent]:
    scripted.clear()
    plain.client.reset()
    start = plain.mark()
    yield plain
    plain.check_frames(start)


@pytest.fixture
async def mechanism() -> str:
    found = await detect()
    if found.mechanism is None:
        pytest.skip(f"no sandbox mechanism works here: {found.detail}")
    return found.mechanism


@pytest.fixture
def outside() -> Iterator[Path]:
    """A file outside the workspace and outside /tmp (Landlock leaves /tmp writable)."""
    home = Path.home().resolve()
    if str(home).startswith("/tmp/"):
        pytest.skip("no directory outside /tmp")
    path = Path(tempfile.mkdtemp(prefix=".agentls-acp-sandbox-", dir=home))
    (path / "precious.txt").write_text("original\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def tool_results(scripted: ScriptedServer) -> list[str]:
    return [str(m["content"]) for m in scripted.requests[-1].messages if m["role"] == "tool"]


async def run(agent: Agent, scripted: ScriptedServer, ws: Path, *commands: str) -> str:
    sid = await agent.new_session(ws)
    await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
    scripted.push(tools(*[call("terminal", {"command": c}) for c in commands]), text("finished"))
    response = await agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
    assert response.stop_reason == "end_turn"
    return sid


async def test_a_denied_command_asks_and_a_refusal_runs_nothing(fresh: Agent, scripted: ScriptedServer, ws: Path,
                                                                outside: Path, mechanism: str) -> None:
    fresh.client.answers.append("reject_once")
    await run(fresh, scripted, ws, f"echo changed > {outside}/precious.txt")
    assert (outside / "precious.txt").read_text() == "original\n"
    (asked,) = fresh.client.permission_requests  # yolo: only leaving the sandbox asks
    call_ = asked["toolCall"]
    assert call_["kind"] == "execute" and "outside the sandbox" in call_["title"]
    assert call_["rawInput"]["sandbox"]["mechanism"] == mechanism and call_["rawInput"]["sandbox"]["denied"] == "write"
    (out,) = tool_results(scripted)
    assert f"the sandbox ({mechanism}) denied a write" in out and "declined" in out
    assert "terminal/create" not in fresh.client.methods()


async def test_allowing_it_runs_it_again_outside(fresh: Agent, scripted: ScriptedServer, ws: Path, outside: Path,
                                                 mechanism: str) -> None:
    fresh.client.answers.append("allow_once")
    await run(fresh, scripted, ws, f"echo changed > {outside}/precious.txt")
    assert (outside / "precious.txt").read_text() == "changed\n"


async def test_a_workspace_may_make_it_strict(frames_ok: Agent, scripted: ScriptedServer,
                                                                  ws: Path, mechanism: str) -> None:
    write_config(ws, sandbox="strict")
    await run(frames_ok, scripted, ws, "echo sandbox=$AGENTLS_SANDBOXED")
    assert "terminal/create" not in frames_ok.client.methods()  # the client has terminals: strict bypasses them
    assert f"sandbox={mechanism}" in tool_results(scripted)[0]


async def test_a_workspace_cannot_turn_it_off(fresh: Agent, scripted: ScriptedServer, ws: Path,
                                              mechanism: str) -> None:
    write_config(ws, sandbox="off", sandbox_network="on")  # loosening: ignored
    await run(fresh, scripted, ws, "echo sandbox=$AGENTLS_SANDBOXED")
    assert f"sandbox={mechanism}" in tool_results(scripted)[0]


async def test_without_a_mechanism_session_info_says_so_once(scripted: ScriptedServer, ws: Path,
                                                             tmp_path: Path) -> None:
    scripted.clear()
    home = tmp_path / "agent"
    async with start_agent(home, agent_env(scripted, home, **{ONLY_ENV: "none"}), caps=NO_TERMINAL) as agent:
        sid = await run(agent, scripted, ws, "echo one", "echo two")
        notices = [u for u in agent.client.updates[sid] if "sandbox" in u.get("_meta", {}).get("agentls", {})]
        assert len(notices) == 1 and notices[0]["sessionUpdate"] == "session_info_update"
        sandbox = notices[0]["_meta"]["agentls"]["sandbox"]
        assert sandbox["mechanism"] is None and "no sandbox is available here" in sandbox["message"]
        assert agent.client.text(sid).count("> agentls: no sandbox is available here") == 1
        assert all("exit code 0" in r for r in tool_results(scripted))
        write_config(ws, sandbox="strict")
        scripted.clear()
        await run(agent, scripted, ws, "touch ran.txt")
        assert tool_results(scripted)[0].startswith("error: the sandbox setting is 'strict'")
        assert not (ws / "ran.txt").exists()
    agent.check_frames()
