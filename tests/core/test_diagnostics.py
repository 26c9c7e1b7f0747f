"""The editor's problems reach the model: the ``diagnostics`` tool, and the new problems an edit brings in,
appended to the edit's result in the same round (agent/diagnostics.py, agent/tools/diagnostics.py).

The test host's problems come from a real source without a language server: Python's own compiler,
run on the file as it is after each write (syntax errors), plus ``# warn:`` comments as warnings."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentls.agent import diagnostics as diag_module
from agentls.agent.disk_host import DiskHost
from agentls.agent.host import Diagnostic
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import AgentFactory
from .helpers import Updates, check, tool_msgs, turn_requests, wire_tool_results


def compiler_problems(path: Path, source: str) -> list[Diagnostic]:
    found = []
    try:
        compile(source, str(path), "exec")
    except SyntaxError as exc:
        found.append(Diagnostic(path, exc.lineno or 1, exc.offset or 1, "error", exc.msg, "python"))
    for n, line in enumerate(source.splitlines(), start=1):
        if "# warn:" in line:
            found.append(Diagnostic(path, n, 1, "warning", line.split("# warn:", 1)[1].strip(), "lint", "W1"))
        if "# hint:" in line:
            found.append(Diagnostic(path, n, 1, "hint", "unused", "lint"))
    return found


class LintingHost(DiskHost):
    """A DiskHost that reports the problems of the files as they are on disk, like an editor would."""

    def __init__(self, root: Path, on_update: Any = None, *, fail: bool = False, hang: bool = False) -> None:
        super().__init__(root, on_update)
        self.calls: list[tuple[list[str], bool]] = []
        self.fail, self.hang = fail, hang

    async def diagnostics(self, paths: Sequence[Path], *, settle: bool) -> dict[Path, list[Diagnostic]] | None:
        self.calls.append(([p.name for p in paths], settle))
        if self.fail:
            raise RuntimeError("the editor went away")
        if self.hang:
            await asyncio.sleep(3600)
        out = {}
        for path in paths:
            out[path] = compiler_problems(path, path.read_text()) if path.is_file() else []
        return out


async def test_an_edit_that_breaks_the_syntax_shows_the_model_the_error_in_the_same_round(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, updates: Updates, wire: str) -> None:
    host = LintingHost(workspace, updates)
    srv.push(tools(call("read_file", {"path": "src/app.py"})),
             tools(call("edit_file", {"path": "src/app.py", "old_string": "    return a + b",
                                      "new_string": "    return (a + b"})), text("oops, fixing"))
    result = check(await make_agent(wire, host=host, approval="yolo").run_conversation("change add"))
    msg = tool_msgs(result)[-1]
    assert msg["content"].startswith("Edited src/app.py (+1 -1 lines)")
    assert "\n\nNew problems in src/app.py after this edit (1 error):\n  src/app.py:" in msg["content"]
    assert "error: '(' was never closed [python]" in msg["content"]
    # The model read it in the very next request of the turn.
    assert "'(' was never closed" in wire_tool_results(turn_requests(srv.requests)[2])[-1]
    assert host.calls == [(["app.py"], False), (["app.py"], True)]  # before the edit, then settled after it


async def test_problems_that_were_already_there_are_not_repeated(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "src" / "util.py").write_text("x = 1  # warn: old warning\ndef helper(:\n    return 42\n")
    host = LintingHost(workspace)
    srv.push(tools(call("read_file", {"path": "src/util.py"})),
             tools(call("write_file", {"path": "src/util.py",
                                       "content": "# new first line\nx = 1  # warn: old warning\ndef helper(:\n"
                                                  "    return 42  # warn: fresh warning\n"})),
             tools(call("edit_file", {"path": "src/util.py", "old_string": "def helper(:", "new_string":
                                      "def helper():"})), text("ok"))
    result = check(await make_agent(host=host, approval="yolo").run_conversation("go"))
    first, second = (m["content"] for m in tool_msgs(result)[1:])
    # The moved error and the old warning are not new; the fresh warning is.
    assert first.endswith("New problems in src/util.py after this edit (1 warning):\n"
                          "  src/util.py:4:1: warning: fresh warning [lint W1]")
    assert "New problems" not in second  # a fix brings in nothing


async def test_many_new_problems_are_bounded_errors_first(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    content = "".join(f"v{i} = {i}  # warn: warning number {i}\n" for i in range(40)) + "def broken(:\n"
    host = LintingHost(workspace)
    srv.push(tools(call("write_file", {"path": "many.py", "content": content})), text("ok"))
    [msg] = tool_msgs(check(await make_agent(host=host, approval="yolo").run_conversation("go")))
    lines = msg["content"].split("\n\nNew problems in many.py after this edit (1 error, 40 warnings):\n")[1]
    shown = lines.splitlines()
    assert len(shown) == 11 and ": error: " in shown[0]
    assert shown[-1] == "  ... and 31 more (31 warnings)"


async def test_a_client_without_diagnostics_gets_plain_edits_and_an_honest_tool(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    srv.push(tools(call("read_file", {"path": "src/app.py"})),
             tools(call("edit_file", {"path": "src/app.py", "old_string": "    return a + b",
                                      "new_string": "    return (a + b"}),
                   call("diagnostics", {"path": "src/app.py"})), text("ok"))
    edit, asked = (m["content"] for m in tool_msgs(
        check(await make_agent(approval="yolo").run_conversation("go")))[1:])
    assert edit.startswith("Edited src/app.py (+1 -1 lines)\n--- a/src/app.py")  # the diff follows
    assert "New problems" not in edit
    assert asked.startswith("error: diagnostics are unavailable")
    assert "terminal tool" in asked


async def test_the_tool_without_a_path_looks_at_the_files_changed_this_turn(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    host = LintingHost(workspace)
    agent = make_agent(host=host, approval="yolo")
    srv.push(tools(call("diagnostics", {})), text("nothing yet"))
    [early] = tool_msgs(check(await agent.run_conversation("check")))
    assert early["content"] == "No file was changed in this turn yet; pass a path to see a file's problems."
    srv.push(tools(call("write_file", {"path": "a.py", "content": "a = (\n"}),
                   call("write_file", {"path": "b.py", "content": "b = 1  # hint: x\n"})),
             tools(call("diagnostics", {})), text("ok"))
    result = check(await agent.run_conversation("write two"))
    report = tool_msgs(result)[-1]["content"]
    assert report.startswith("Problems (1 error):\n  a.py:1:")
    assert report.endswith("No problems in b.py.")
    srv.push(tools(call("diagnostics", {})), text("new turn"))
    result = check(await agent.run_conversation("and now?"))
    assert tool_msgs(result)[-1]["content"].startswith("No file was changed in this turn yet")


async def test_a_failing_or_silent_editor_never_breaks_an_edit(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diag_module, "TIMEOUT", 0.2)
    for n, host in enumerate((LintingHost(workspace, fail=True), LintingHost(workspace, hang=True))):
        srv.push(tools(call("write_file", {"path": f"x{n}.py", "content": "x = (\n"}),
                       call("diagnostics", {"path": f"x{n}.py"})), text("ok"))
        edit, asked = (m["content"] for m in tool_msgs(check(
            await make_agent(host=host, approval="yolo").run_conversation("go"))))
        assert edit.startswith(f"Created x{n}.py")
        assert "New problems" not in edit
        assert asked.startswith("error: diagnostics are unavailable")


async def test_a_rejected_edit_asks_nothing_after(make_agent: AgentFactory, srv: ScriptedServer,
                                                  workspace: Path) -> None:
    host = LintingHost(workspace)
    srv.push(tools(call("write_file", {"path": "x.py", "content": "x = (\n"})), text("ok"))
    [msg] = tool_msgs(check(await make_agent(host=host, approval="ask").run_conversation("go")))
    assert msg["content"].startswith("error: this edit needs the user's approval")
    assert host.calls == [(["x.py"], False)]
    assert not (workspace / "x.py").exists()
