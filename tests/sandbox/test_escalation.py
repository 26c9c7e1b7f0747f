"""Through real turns (the scripted provider calls ``terminal``): a command the sandbox denied is
reported as such, and the user is asked whether to run it again outside, once or always for its
prefix; a refusal runs nothing more, and yolo does not skip the question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.agent.disk_host import DiskHost
from agentls.agent.sandbox import detect as detect_module
from agentls.agent.sandbox.policy import BUBBLEWRAP, LANDLOCK, SandboxConfig
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import Loopback, mechanism_or_skip
from .conftest import Factory
from .turns import Answering, asked_outside, outputs, turn


async def test_a_refusal_runs_nothing_more(make: Factory, srv: ScriptedServer, workspace: Path, outside: Path,
                                           mechanism: str) -> None:
    host = Answering(workspace, ["reject_once"])
    (out,) = await turn(make, srv, f"echo changed > {outside}/precious.txt", host=host)
    assert (outside / "precious.txt").read_text() == "original\n"
    (request,) = host.asked  # yolo: the command itself did not ask; leaving the sandbox did
    assert request.kind == "execute" and request.raw_input["sandbox"]["mechanism"] == mechanism
    assert request.raw_input["sandbox"]["denied"] == "write" and "outside the sandbox" in request.title
    # A redirection is not one plain program run (docs/sandbox.md): no "always" for it.
    assert {o.kind for o in request.options} == {"allow_once", "reject_once", "reject_always"}
    assert f"the sandbox ({mechanism}) denied a write outside the workspace" in out
    assert "declined to run it outside the sandbox" in out


async def test_allow_once_runs_it_again_outside(make: Factory, srv: ScriptedServer, workspace: Path, outside: Path,
                                                mechanism: str) -> None:
    host = Answering(workspace, ["allow_once"])
    first, second = await turn(make, srv, f"echo once > {outside}/precious.txt",
                               f"echo twice >> {outside}/precious.txt", host=host)
    assert (outside / "precious.txt").read_text() == "once\ntwice\n"
    assert len(asked_outside(host)) == 2  # "once" covers one run
    assert "exit code 0" in first and "allowed running it again outside the sandbox" in first


async def test_allow_always_covers_the_prefix_for_the_session(make: Factory, srv: ScriptedServer, workspace: Path,
                                                              outside: Path, mechanism: str) -> None:
    host = Answering(workspace, ["allow_always", "reject_once"])
    agent = make(host=host)
    srv.push(tools(call("terminal", {"command": f"touch {outside}/a"})),
             tools(call("terminal", {"command": f"touch {outside}/b"}),
                   call("terminal", {"command": f"echo x > {outside}/c"})), text("done"))
    result = await agent.run_conversation("go")
    assert (outside / "a").exists() and (outside / "b").exists()
    assert not (outside / "c").exists()  # echo is another prefix: still sandboxed, still asks
    assert [r.raw_input["command"] for r in asked_outside(host)] == [f"touch {outside}/a", f"echo x > {outside}/c"]
    touch_b = outputs(result)[1]
    assert "denied" not in touch_b and "exit code 0" in touch_b


async def test_yolo_with_nobody_to_ask_refuses(make: Factory, srv: ScriptedServer, workspace: Path, outside: Path,
                                               mechanism: str) -> None:
    (out,) = await turn(make, srv, f"echo changed > {outside}/precious.txt", host=DiskHost(workspace))
    assert (outside / "precious.txt").read_text() == "original\n"
    assert "denied a write outside the workspace" in out and "cannot ask" in out and "sandbox_writable" in out


async def test_network_denied_then_refused_never_connects(make: Factory, srv: ScriptedServer, workspace: Path,
                                                          loopback: Loopback, mechanism: str) -> None:
    host = Answering(workspace, ["reject_once"])
    (out,) = await turn(make, srv, loopback.connect_command(), host=host)
    assert loopback.connections == 0
    assert asked_outside(host)[0].raw_input["sandbox"]["denied"] == "network"
    assert "denied network access" in out


async def test_network_on_needs_no_question(make: Factory, srv: ScriptedServer, workspace: Path,
                                            loopback: Loopback, mechanism: str) -> None:
    host = Answering(workspace, ["reject_once"])
    (out,) = await turn(make, srv, loopback.connect_command(), host=host, sandbox=SandboxConfig(network=True))
    assert loopback.connections == 1 and "pong" in out and host.asked == []


async def test_ask_mode_asks_for_the_command_then_for_leaving_the_sandbox(make: Factory, srv: ScriptedServer,
                                                                          workspace: Path, outside: Path,
                                                                          mechanism: str) -> None:
    host = Answering(workspace, ["allow_once", "reject_once"])
    await turn(make, srv, f"rm {outside}/precious.txt", host=host, approval="ask")
    assert [("sandbox" in r.raw_input) for r in host.asked] == [False, True]
    assert (outside / "precious.txt").exists()


async def test_commands_that_work_inside_ask_nothing(make: Factory, srv: ScriptedServer, workspace: Path,
                                                     mechanism: str) -> None:
    host = Answering(workspace, ["reject_once"])
    ok, failing = await turn(make, srv, "echo hi > made.txt && cat made.txt", "ls no-such-file", host=host)
    assert host.asked == [] and "hi" in ok and "exit code 0" in ok
    assert "No such file" in failing and "sandbox" not in failing.split("\n", 2)[1]


async def test_the_files_own_permissions_are_not_the_sandbox(make: Factory, srv: ScriptedServer, workspace: Path,
                                                             mechanism: str) -> None:
    (workspace / "script.sh").write_text("echo hi\n")  # not executable
    (workspace / "locked").mkdir(mode=0o500)
    host = Answering(workspace, ["reject_once"])
    outs = await turn(make, srv, "./script.sh", "touch locked/x", host=host)
    assert all("Permission denied" in o or "permission denied" in o.lower() for o in outs), outs
    if mechanism == LANDLOCK:  # Landlock's refusals read "Permission denied" too: the path tells them apart
        assert host.asked == []
    assert all("denied a write" not in o for o in outs)


async def test_the_sandbox_is_on_by_default_and_off_when_turned_off(make: Factory, srv: ScriptedServer,
                                                                    workspace: Path, mechanism: str) -> None:
    (on,) = await turn(make, srv, "echo sandbox=$AGENTLS_SANDBOXED")
    (off,) = await turn(make, srv, "echo sandbox=$AGENTLS_SANDBOXED", sandbox=SandboxConfig(mode="off"))
    assert f"sandbox={mechanism}" in on and "sandbox=\n" in off


async def test_tmp_is_the_sessions_own_and_lasts_between_its_commands(make: Factory, srv: ScriptedServer,
                                                                     workspace: Path, mechanism: str) -> None:
    name = f"agentls-test-{id(workspace)}"
    agent = make(host=DiskHost(workspace))
    srv.push(tools(call("terminal", {"command": f"echo kept > /tmp/{name}"})),
             tools(call("terminal", {"command": f"cat /tmp/{name}"})), text("done"))
    result = await agent.run_conversation("go")
    assert "kept" in outputs(result)[1]
    if mechanism == BUBBLEWRAP:
        assert not Path(f"/tmp/{name}").exists()  # the host's /tmp never saw it
        tmp = agent.sandbox._tmp
        assert tmp is not None and (tmp / name).read_text() == "kept\n"
        await agent.close()
        assert not tmp.exists()
    else:
        Path(f"/tmp/{name}").unlink()  # Landlock: /tmp is the host's, shared


async def test_no_mechanism_auto_runs_unconfined_and_says_so_once(make: Factory, srv: ScriptedServer,
                                                                  workspace: Path, outside: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(detect_module.ONLY_ENV, "none")
    updates: list[dict[str, Any]] = []
    host = DiskHost(workspace, updates.append)
    srv.push(tools(call("terminal", {"command": "echo one"}), call("terminal", {"command": "echo two"})),
             tools(call("terminal", {"command": f"touch {outside}/made"})), text("done"))
    result = await make(host=host).run_conversation("go")
    assert all("exit code 0" in o for o in outputs(result)) and (outside / "made").exists()
    notices = [u for u in updates if "sandbox" in u.get("_meta", {}).get("agentls", {})]
    assert len(notices) == 1
    sandbox = notices[0]["_meta"]["agentls"]["sandbox"]
    assert sandbox["mechanism"] is None and sandbox["mode"] == "auto" and "run unconfined" in sandbox["message"]


async def test_no_mechanism_strict_refuses_and_runs_nothing(make: Factory, srv: ScriptedServer, workspace: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(detect_module.ONLY_ENV, "none")
    (out,) = await turn(make, srv, "touch ran.txt", sandbox=SandboxConfig(mode="strict"))
    assert not (workspace / "ran.txt").exists()
    assert out.startswith("error: the sandbox setting is 'strict'") and "bubblewrap" in out


async def test_without_bubblewrap_on_path_landlock_confines(make: Factory, srv: ScriptedServer, workspace: Path,
                                                            outside: Path, monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    """bubblewrap missing, simulated by PATH: detection falls back to Landlock, the same write checks hold."""
    await mechanism_or_skip(LANDLOCK, monkeypatch)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "echo", "touch", "cat"):
        (bin_dir / tool).symlink_to(f"/bin/{tool}")
    monkeypatch.setenv("PATH", str(bin_dir))
    found = await detect_module.detect()
    assert found.mechanism == LANDLOCK and any("bwrap is not on PATH" in s for s in found.skipped)
    inside, escape = await turn(make, srv, "echo in > made.txt; echo $AGENTLS_SANDBOXED",
                                f"echo changed > {outside}/precious.txt", host=DiskHost(workspace))
    assert (workspace / "made.txt").read_text() == "in\n" and "landlock" in inside
    assert (outside / "precious.txt").read_text() == "original\n" and "the sandbox (landlock) denied" in escape


async def test_bubblewrap_is_preferred(monkeypatch: pytest.MonkeyPatch) -> None:
    await mechanism_or_skip(BUBBLEWRAP, monkeypatch)
    assert (await detect_module.detect()).mechanism == BUBBLEWRAP


async def test_a_dangerous_command_is_never_covered_by_always(make: Factory, srv: ScriptedServer, workspace: Path,
                                                              outside: Path, mechanism: str) -> None:
    (outside / "dir").mkdir()
    host = Answering(workspace, ["allow_always", "allow_once", "reject_once"])
    await turn(make, srv, f"rm {outside}/precious.txt", f"rm -rf {outside}/dir", host=host)
    assert not (outside / "precious.txt").exists()  # "always" for rm: it ran outside
    assert (outside / "dir").is_dir()  # the recursive delete outside is dangerous: sandboxed again, then refused
    first, danger, second = host.asked
    assert "sandbox" in first.raw_input and "danger" in danger.raw_input and "sandbox" in second.raw_input
    assert "allow_always" not in {o.kind for o in second.options}
