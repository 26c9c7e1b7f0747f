"""Honest outcomes: the loop guard, the outcome record on TurnResult, the footer and the exit codes of
``agentls run`` (a real subprocess against the scripted provider, also a real subprocess)."""

from __future__ import annotations

import asyncio
import json
import re
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.agent import AIAgent
from agentls.agent.footer import footer
from agentls.agent.outcome import FileChange, LoopGuard
from agentls.agent.result import ExitReason, TurnResult
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import GREET, AgentFactory, results

ROOT = Path(__file__).resolve().parents[2]
BAD_EDIT = {"path": "greet.py", "old_string": "Goodbye", "new_string": "Hi"}


# ----------------------------------------------------------------------------- the loop guard
async def test_the_third_identical_call_stops_tool_use(make_agent: AgentFactory, srv: ScriptedServer,
                                                       workspace: Path) -> None:
    srv.push(tools(call("read_file", {"path": "greet.py"})), *(tools(call("edit_file", BAD_EDIT)) for _ in range(3)),
             text("I could not find Goodbye in greet.py."))
    result = await make_agent().run_conversation("change Goodbye to Hi")
    outs = results(result)
    assert len(outs) == 4 and all(o.startswith("error") for o in outs[1:])
    assert "this exact edit_file call 3 times" in outs[3] and "same result" in outs[3] and "tool use is stopped" in outs[3]
    assert result.tools_stopped == "edit_file was called 3 times with the same arguments"
    last = srv.requests[-1].body
    assert last.get("tool_choice") == "none"  # the model is told, and can no longer call tools
    assert [r.body.get("tool_choice") for r in srv.requests[:-1]] == [None] * 4
    assert result.completed and result.final_response and result.last_call_failed
    assert (workspace / "greet.py").read_text() == GREET
    assert "tool use stopped: edit_file was called 3 times" in footer(result)


async def test_repeats_with_other_calls_between_still_count_and_different_ones_do_not(
        make_agent: AgentFactory, srv: ScriptedServer) -> None:
    read = call("read_file", {"path": "greet.py"})
    srv.push(tools(read), tools(call("read_file", {"path": "README.md"})), tools(read),
             tools(call("read_file", {"path": "greet.py", "offset": 2})), tools(read), text("done"))
    result = await make_agent().run_conversation("read")
    outs = results(result)
    assert not any(o.startswith("error") for o in outs[:4]) and outs[4].startswith("error: you made this exact read_file call 3 times")


async def test_json_mode_after_the_guard_offers_only_a_final_answer(make_agent: AgentFactory,
                                                                    srv: ScriptedServer) -> None:
    same = json.dumps({"name": "list_dir", "arguments": {}})
    srv.push(text(same), text(same), text(same), text(json.dumps({"name": "final_answer", "arguments": {"text": "ok"}})))
    result = await make_agent(tool_mode="json").run_conversation("list")
    assert result.final_response == "ok" and result.tools_stopped
    variants = srv.requests[-1].body["response_format"]["json_schema"]["schema"]["anyOf"]
    assert [v["properties"]["name"]["const"] for v in variants] == ["final_answer"]
    assert "tool_choice" not in srv.requests[-1].body


def test_guard_keys_ignore_argument_order_and_copies_within_one_reply() -> None:
    guard = LoopGuard(limit=2)
    assert guard.see("edit_file", {"a": 1, "b": 2}, "", step=1) is None
    assert guard.see("edit_file", {"a": 1, "b": 2}, "", step=1) is None  # the same reply: a copy, not a loop
    guard.result("edit_file", {"a": 1, "b": 2}, "", "error: no")
    guard.result("edit_file", {"a": 1, "b": 2}, "", "error: no")  # the copy's result: not counted again
    assert guard.see("edit_file", {"b": 2, "a": 1}, "", step=2) is not None


async def test_rereading_a_file_that_changed_is_not_a_loop(make_agent: AgentFactory, srv: ScriptedServer,
                                                           workspace: Path) -> None:
    read = call("read_file", {"path": "greet.py"})
    srv.push(tools(read), tools(call("edit_file", {"path": "greet.py", "old_string": "Hello", "new_string": "Hi"})),
             tools(read), tools(call("edit_file", {"path": "greet.py", "old_string": "Hi", "new_string": "Hey"})),
             tools(read), text("done"))
    result = await make_agent().run_conversation("edit twice, checking each time")
    assert not any(o.startswith("error") for o in results(result)) and result.tools_stopped is None


# ----------------------------------------------------------------------------- the outcome record
async def test_outcome_records_changes_failures_and_refusals(make_agent: AgentFactory, srv: ScriptedServer,
                                                             workspace: Path) -> None:
    srv.push(tools(call("read_file", {"path": "greet.py"}), call("read_file", {"path": "nope.txt"})),
             tools(call("edit_file", {"path": "greet.py", "old_string": "Hello", "new_string": "Hi"}),
                   call("write_file", {"path": "notes.txt", "content": "a\nb\n"}),
                   call("terminal", {"command": "python greet.py Alice"})),
             text("Done: greet.py prints Hi, Alice!"))
    result = await make_agent(approval="auto-edit").run_conversation("edit and run")
    assert result.files_changed == (FileChange("greet.py", 1, 1), FileChange("notes.txt", 2, 0, created=True))
    assert [(f.tool, f.path) for f in result.failed_calls] == [("read_file", "nope.txt")]
    assert [(r.action, r.title, r.reason) for r in result.refused] == [
        ("command", "python greet.py Alice", "approval: auto-edit")]
    refusal = results(result)[-1]
    assert "did NOT run" in refusal and "do not guess" in refusal  # the model sees a clear refusal
    assert result.last_call_failed and not result.failed_edits
    assert footer(result) == ("changed: greet.py +1 \u22121, notes.txt (new, +2); 1 tool call failed; "
                              "1 command refused (approval: auto-edit); the last tool call failed")
    as_json = result.to_json()
    assert as_json["files_changed"][0] == {"path": "greet.py", "added": 1, "removed": 1, "created": False,
                                           "deleted": False}


async def test_an_edit_undone_in_the_same_turn_is_not_a_change(make_agent: AgentFactory, srv: ScriptedServer,
                                                               workspace: Path) -> None:
    srv.push(tools(call("read_file", {"path": "greet.py"})),
             tools(call("edit_file", {"path": "greet.py", "old_string": "Hello", "new_string": "Hi"})),
             tools(call("edit_file", {"path": "greet.py", "old_string": "Hi", "new_string": "Hello"})), text("done"))
    result = await make_agent().run_conversation("flip flop")
    assert result.files_changed == () and footer(result) == "no files changed"


def test_footer_wording() -> None:
    r = TurnResult(session_id="s", exit_reason=ExitReason.TEXT_RESPONSE)
    assert footer(r) == "no files changed"
    r = TurnResult(session_id="s", exit_reason=ExitReason.BUDGET_EXHAUSTED, last_call_failed=True,
                   files_changed=(FileChange("a.py", 0, 0, deleted=True),))
    assert footer(r) == "changed: a.py (deleted)"  # "the last tool call failed" is about answers only


# ----------------------------------------------------------------------------- agentls run
def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLS_") and not k.endswith("_API_KEY")}
    env.update(AGENTLS_DATA_DIR=str(tmp_path / "data"), AGENTLS_CONFIG=str(tmp_path / "none.toml"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return env


@asynccontextmanager
async def scripted(tmp_path: Path, replies: list[dict[str, Any]]) -> AsyncIterator[str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies))
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "agentls.agent.scripted", "--script",
                                                str(script), env=_env(tmp_path), stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        yield json.loads(await asyncio.wait_for(proc.stdout.readline(), 15))["openai_url"]
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 10)


async def run(tmp_path: Path, workspace: Path, replies: list[dict[str, Any]], *extra: str) -> tuple[int, str, str]:
    async with scripted(tmp_path, replies) as url:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--base-url", url, "-m", "m",
            "--no-persist", *extra, "do it", env=_env(tmp_path), stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in pairs]}


READ = ("read_file", {"path": "greet.py"})
EDIT = ("edit_file", {"path": "greet.py", "old_string": "Hello", "new_string": "Hi"})


@pytest.mark.parametrize(("replies", "extra", "code", "last_line"), [
    ([_calls(READ), _calls(EDIT), {"content": "Changed Hello to Hi."}], (), 0, "changed: greet.py +1 \u22121"),
    ([_calls(READ), _calls(("edit_file", BAD_EDIT)), {"content": "The greeting is now Hi."}], (), 4,
     "no files changed; 1 tool call failed; edit not made: greet.py; the last tool call failed"),
    ([_calls(READ), _calls(EDIT), {"content": "Asked to edit."}], ("--approval", "ask"), 4,
     "no files changed; 1 edit refused (approval: ask); the last tool call failed"),
    ([_calls(("terminal", {"command": "python greet.py Alice"})), {"content": "It printed Hello, Alice!"}], (), 0,
     "no files changed; 1 command refused (approval: auto-edit); the last tool call failed"),
    ([_calls(READ), _calls(READ), {"content": "summary"}], ("--max-iterations", "2"), 3, "no files changed"),
    ([{"status": 401, "error_message": "bad key"}], (), 1, "no files changed"),
])
async def test_run_footer_and_exit_codes(tmp_path: Path, replies: list[dict[str, Any]], extra: tuple[str, ...],
                                         code: int, last_line: str) -> None:
    workspace = tmp_path / "hello"
    workspace.mkdir()
    (workspace / "greet.py").write_text(GREET)
    got, out, err = await run(tmp_path, workspace, replies, *extra)
    assert got == code, err
    assert err.rstrip("\n").rsplit("\n", 1)[-1] == last_line, err


def test_readme_documents_every_exit_code() -> None:
    from agentls.server import run as run_module

    readme = (ROOT / "README.md").read_text()
    documented = {int(m) for m in re.findall(r"^\| (\d+) \| ", readme, re.MULTILINE)}
    codes = {v for k, v in vars(run_module).items() if k.startswith("EXIT_")}
    assert documented == codes


async def test_a_small_model_repeating_a_failed_call_is_asked_again_sampling(make_agent: AgentFactory,
                                                                              srv: ScriptedServer,
                                                                              workspace: Path) -> None:
    """agent/loop/resample.py: the repeat never runs; the resampled reply does; only it is in the transcript."""
    bad = {"path": "greet.py", "old_string": "Hola", "new_string": "Hi"}
    good = {"path": "greet.py", "old_string": "Hello", "new_string": "Hi"}
    srv.push(tools(call("read_file", {"path": "greet.py"})), tools(call("edit_file", bad)),
             tools(call("edit_file", bad)), tools(call("edit_file", good)), text("done"))
    result = await make_agent(small_model=True, temperature=0.0).run_conversation("Hello to Hi")
    assert [c.get("function", {}).get("name") for m in result.messages for c in m.get("tool_calls") or []] == \
        ["read_file", "edit_file", "edit_file"]  # the repeat was not kept
    assert results(result)[-1].startswith("Edited greet.py")
    temperatures = [r.body.get("temperature") for r in srv.requests]
    assert temperatures == [0.0, 0.0, 0.0, 0.7, 0.0]  # the resample alone samples
    assert result.api_calls == 5 and not result.failed_edits


async def test_other_models_repeat_as_they_like(make_agent: AgentFactory, srv: ScriptedServer,
                                                workspace: Path) -> None:
    bad = {"path": "greet.py", "old_string": "Hola", "new_string": "Hi"}
    srv.push(tools(call("read_file", {"path": "greet.py"})), tools(call("edit_file", bad)),
             tools(call("edit_file", bad)), text("I could not"))
    result = await make_agent(temperature=0.0).run_conversation("Hello to Hi")
    assert len(results(result)) == 3 and all(r.body.get("temperature") == 0.0 for r in srv.requests)


async def test_a_small_model_starts_with_the_files_its_request_names(make_agent: AgentFactory, srv: ScriptedServer,
                                                                      workspace: Path) -> None:
    """agent/loop/preread.py: greet.py (by name) and util.py (by a file name only one file has) are read by the
    agent before the model's first step; the edit then needs no read of its own."""
    srv.push(tools(call("edit_file", {"path": "greet.py", "old_string": "Hello", "new_string": "Hi"})), text("done"))
    result = await make_agent(small_model=True).run_conversation(
        "In greet.py, change Hello to Hi (util.py and missing.py stay as they are).")
    first = srv.requests[0].messages
    assert [m["role"] for m in first] == ["system", "user", "assistant", "tool", "tool"]
    assert [json.loads(c["function"]["arguments"]) for c in first[2]["tool_calls"]] == [
        {"path": "greet.py"}, {"path": "src/pkg/util.py"}]
    assert '     5\t    return "Hello, " + name + "!"' in first[3]["content"]
    assert results(result)[-1].startswith("Edited greet.py")
    stored = next(m for m in result.messages if m.get("role") == "assistant")
    assert stored.get("meta", {}).get("preread") is True


async def test_other_models_and_requests_naming_no_file_start_with_the_model(make_agent: AgentFactory,
                                                                              srv: ScriptedServer) -> None:
    srv.push(text("hi"), text("hello"))
    await make_agent().run_conversation("What does greet.py do?")
    await make_agent(small_model=True).run_conversation("What does this project do?")
    srv.push(text("I ran it"))  # asked to run it: the model must run it, not predict it from the file
    await make_agent(small_model=True).run_conversation("Run python greet.py Bob and tell me what it prints")
    assert [[m["role"] for m in r.messages] for r in srv.requests] == [["system", "user"]] * 3


async def test_a_small_models_cut_off_answer_is_not_continued(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    srv.push(text("la la la", finish_reason="length"))
    result = await make_agent(small_model=True).run_conversation("sing")
    assert result.final_response == "la la la" and len(srv.requests) == 1
    srv.push(text("la la la", finish_reason="length"), text(" and more"))
    result = await make_agent().run_conversation("sing")
    assert result.final_response == "la la la and more" and len(srv.requests) == 3


def test_small_model_and_the_local_output_cap_come_from_settings(tmp_path: Path) -> None:
    """``small_model`` in settings turns the small-model rules on for any model; the embedded model gets a
    2048-token cap unless ``max_tokens`` says otherwise (constructing an agent opens nothing)."""
    from agentls.agent.config import Settings
    from agentls.agent.resolve import agent_from_settings

    def build(**kw: Any) -> AIAgent:
        return agent_from_settings(Settings(**kw), workspace=tmp_path)

    remote = build(model="gpt-x", base_url="http://127.0.0.1:9/v1", small_model=True)
    assert remote.profile.name == "small" and "edit_file" in remote.registry.names
    assert build(model="gpt-x", base_url="http://127.0.0.1:9/v1").profile.name == "general"
    local = build(model="local")
    assert local.profile.name == "small" and local._parts.caller.max_tokens == 2048 and local._parts.caller.temperature == 0
    assert build(model="local", max_tokens=300)._parts.caller.max_tokens == 300
    assert build(model="local", small_model=False).profile.name == "general"
    assert not local.profile.model_titles and not local.profile.delegate and remote.profile.model_titles


def test_a_request_with_follow_up_turns_reports_each_file_once_and_the_status_line_leads_with_it() -> None:
    """server/runtime/turns.py merges the turns of one request; server/lsp/turns.py puts the line first."""
    from lsprotocol import types

    from agentls.server.lsp.turns import answer_text
    from agentls.server.runtime.turns import TurnRun

    first = TurnResult(session_id="s", exit_reason=ExitReason.TEXT_RESPONSE, final_response="one",
                       files_changed=(FileChange("a.py", 1, 1), FileChange("b.py", 2, 0, created=True)))
    second = TurnResult(session_id="s", exit_reason=ExitReason.TEXT_RESPONSE, final_response="two",
                        files_changed=(FileChange("a.py", 3, 0),))
    merged = TurnRun((first, second)).merged
    assert merged.final_response == "two"
    assert merged.files_changed == (FileChange("a.py", 4, 1), FileChange("b.py", 2, 0, created=True))
    assert answer_text(second) == (types.MessageType.Info, "agentls [changed: a.py +3 \u22120]: two")
    quiet = TurnResult(session_id="s", exit_reason=ExitReason.TEXT_RESPONSE, final_response="just an answer")
    assert answer_text(quiet) == (types.MessageType.Info, "agentls: just an answer")
