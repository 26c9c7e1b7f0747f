"""Real Helix 25.01 under tmux, with the documented editors/helix/languages.toml, against the real
`agentls lsp` and the scripted provider.

Helix comes from Debian trixie, unpacked into ~/.cache/agentls-test by scripts/editors/install-helix
(nothing installed system-wide). Each test starts Helix in its own tmux server with a throwaway HOME
and config folder holding an unchanged copy of editors/helix/languages.toml; `agentls` is the only
language server on PATH. Keys go in with `send-keys`, the screen comes back with `capture-pane`.
A failing test keeps the last screen and Helix's log (which has agentls's stderr) in
test-artifacts/helix/.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentls.agent.scripted import RecordedRequest, ScriptedServer, call, text, tools

from .realeditors import ARTIFACTS, ROOT, install, unavailable
from .tmux import TMUX, Tmux

LANGUAGES = ROOT / "editors" / "helix" / "languages.toml"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def hx() -> str:
    path = install("install-helix", "AGENTLS_HX")
    if TMUX is None:
        unavailable("tmux is not installed (apt-get install tmux)")
    if not (BIN / "agentls").exists():
        unavailable(f"no agentls next to {sys.executable} (./scripts/setup)")
    return path


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer.run_in_thread() as srv:
        yield srv


class Helix:
    """One Helix editing one file of a fresh workspace, under its own tmux server."""

    def __init__(self, hx: str, home: Path, scripted: ScriptedServer, files: dict[str, str], open_file: str) -> None:
        self.home = home
        self.ws = home / "ws"
        self.log = home / "helix.log"
        for name, content in files.items():
            (self.ws / name).parent.mkdir(parents=True, exist_ok=True)
            (self.ws / name).write_text(content)
        (self.ws / ".git").mkdir()  # the workspace root, for Helix and for agentls
        config = home / "config"
        (config / "helix").mkdir(parents=True)
        shutil.copy(LANGUAGES, config / "helix" / "languages.toml")
        bin_dir = home / "bin"
        bin_dir.mkdir()
        (bin_dir / "agentls").symlink_to(BIN / "agentls")
        env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",  # agentls, and none of Helix's other python servers
            "HOME": str(home), "XDG_CONFIG_HOME": str(config), "XDG_CACHE_HOME": str(home / "cache"),
            "XDG_DATA_HOME": str(home / "data"), "TERM": "tmux-256color", "LANG": "C.UTF-8",
            # The model: agentls reads these when the config table (Helix's initializationOptions) is silent.
            "AGENTLS_BASE_URL": scripted.openai_url, "AGENTLS_PROVIDER": "openai", "AGENTLS_MODEL": "scripted",
            "AGENTLS_API_KEY": "sk-helix-test", "AGENTLS_DATA_DIR": str(home / "agentls-data"),
            "AGENTLS_CONFIG": str(home / "no-config.toml"),
        }
        self.tmux = Tmux([hx, "--log", str(self.log), "-v", open_file], cwd=self.ws, env=env)
        self.tmux.wait_for_text(open_file, timeout=60)

    # -- reading the screen
    def statusline(self) -> str:
        screen = self.tmux.screen()
        return screen[-2] if len(screen) > 1 else ""

    def buffer_lines(self, screen: list[str]) -> list[str]:
        """The buffer's lines on screen, without Helix's gutter: a diagnostics column, the line number
        (right-aligned, so the gutter is as wide on every line) and a space."""
        gutter = re.compile(r"^\D*\d+ ")
        numbered = [line for line in screen[:-2] if gutter.match(line)]
        match = gutter.match(numbered[0]) if numbered else None
        width = match.end() + 1 if match else 0
        return [line[width:] for line in numbered]

    def wait_message(self, what: str, check: Callable[[str], bool], timeout: float = 90.0) -> str:
        """Wait for the last row (Helix's message line, where ``window/showMessage`` shows) to pass ``check``."""
        lines = self.tmux.wait(f"the status message: {what}", lambda s: bool(s) and check(s[-1].strip()), timeout)
        return lines[-1].strip()

    def wait_agentls_ready(self) -> None:
        """Helix has started agentls and heard its initialize answer (the log says so)."""
        def ready(_: list[str]) -> bool:
            return self.log.exists() and '"executeCommandProvider"' in self.log.read_text(errors="replace")
        self.tmux.wait("agentls to answer initialize (helix.log)", ready, timeout=60)

    def executed(self, command: str, timeout: float = 120.0) -> dict[str, object]:
        """Wait until agentls has answered the last ``workspace/executeCommand`` of ``command`` that Helix sent
        (Helix's log has both messages); return the answer (``result`` or ``error``). Anything the server sent
        before its answer (``window/showMessage``) has reached Helix by then."""
        def answer() -> dict[str, object] | None:
            sent: int | None = None
            answers: dict[int, dict[str, object]] = {}
            for line in self.log.read_text(errors="replace").splitlines() if self.log.exists() else []:
                for arrow in ("agentls -> ", "agentls <- "):
                    at = line.find(arrow)
                    if at < 0:
                        continue
                    try:
                        message = json.loads(line[at + len(arrow):])
                    except ValueError:
                        continue
                    if not isinstance(message, dict) or "id" not in message:
                        continue
                    if arrow.endswith("-> ") and message.get("method") == "workspace/executeCommand" \
                            and message.get("params", {}).get("command") == command:
                        sent = message["id"]
                    elif arrow.endswith("<- ") and ("result" in message or "error" in message):
                        answers[message["id"]] = message
            return answers.get(sent) if sent is not None else None

        return self.tmux.poll(f"agentls to answer {command} (helix.log)", answer, timeout)

    # -- typing
    def command(self, line: str) -> None:
        """``:line`` then Enter, from normal mode. (No Escape first: Escape then ``:`` in quick succession
        reads as Alt-: to the terminal.)"""
        self.tmux.keys(":")
        self.tmux.keys(line, literal=True)
        self.tmux.keys("Enter")

    def goto_line(self, number: int) -> None:
        self.command(str(number))

    def code_action(self, title: str) -> None:
        """``space a`` and pick the action called ``title``: the first in the menu, since agentls is the only
        language server here and the cursor's line has one ``@agent`` comment."""
        self.tmux.keys("Space")
        self.tmux.keys("a")
        self.tmux.wait_for_text(title, timeout=60)
        self.tmux.keys("Enter")

    def quit(self) -> None:
        """``:quit!``, so Helix shuts agentls down as it would for a user; then end the tmux server."""
        try:
            self.command("quit!")
            self.tmux.poll("Helix to exit", lambda: True if self.tmux.exited() else None, timeout=20)
        finally:
            self.tmux.kill()


Start = Callable[[dict[str, str], str], Helix]


@pytest.fixture
def helix(hx: str, scripted: ScriptedServer, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Start]:
    """``helix(files, open_file)`` starts Helix on a fresh workspace, once agentls has initialized."""
    started: list[Helix] = []
    scripted.clear()

    def start(files: dict[str, str], open_file: str) -> Helix:
        editor = Helix(hx, tmp_path, scripted, files, open_file)
        started.append(editor)
        editor.wait_agentls_ready()
        return editor

    yield start
    report = getattr(request.node, "rep_call", None)
    out = ARTIFACTS / "helix"
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)
    for editor in started:
        if report is not None and report.failed:
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{name}.screen.txt").write_text(editor.tmux.text())
            if editor.log.exists():
                shutil.copy(editor.log, out / f"{name}.helix.log")
        else:
            for stale in out.glob(f"{name}.*"):
                stale.unlink()
        editor.quit()


APP = "def main():\n    # @agent add a greeting\n    return 1\n"
GREETED = 'def main():\n    print("hello")\n    return 1\n'
GREETING_EDIT = tools(call("read_file", {"path": "app.py"}), call("edit_file", {"path": "app.py", "old_string": "    return 1\n",
                                         "new_string": '    print("hello")\n    return 1\n'}))


def turn_requests(scripted: ScriptedServer) -> list[RecordedRequest]:
    return [r for r in scripted.requests if r.headers.get("x-agentls-purpose", "turn") == "turn"]


def run_agent_comment(editor: Helix) -> dict[str, object]:
    """``space a`` on the ``@agent`` line, pick the agentls action, wait for the turn's answer."""
    editor.goto_line(2)
    editor.code_action("agentls: add a greeting")
    return editor.executed("agent.codeAction")


def test_the_agent_code_action_applies_an_edit_and_removes_the_comment(helix: Start, scripted: ScriptedServer) -> None:
    scripted.push(GREETING_EDIT, text("Added a greeting."))
    editor = helix({"app.py": APP}, "app.py")
    answer = run_agent_comment(editor)
    assert "result" in answer and answer["result"]["completed"] is True, answer  # type: ignore[index]
    screen = editor.tmux.wait("the edit, without the @agent comment",
                              lambda s: any('print("hello")' in line for line in s) and not any("@agent" in line for line in s))
    assert editor.buffer_lines(screen) == GREETED.splitlines()
    assert "[+]" in editor.statusline(), "the edit is in the buffer, not yet saved"
    assert (editor.ws / "app.py").read_text() == APP
    # The model was told the file and the line, and got the buffer's text.
    turn = turn_requests(scripted)[0]
    assert turn.last_user_text is not None and "add a greeting" in turn.last_user_text
    assert "app.py" in str(turn.messages) and "line 2" in str(turn.messages)

    editor.command("write")
    # Helix sends didSave once the file is written ("[+]" goes from the status line earlier than that).
    editor.tmux.poll("textDocument/didSave (helix.log)",
                     lambda: True if '"method":"textDocument/didSave"' in editor.log.read_text(errors="replace") else None)
    assert "[+]" not in editor.statusline()
    assert (editor.ws / "app.py").read_text() == GREETED


def test_the_status_line_shows_a_readable_answer(helix: Start, scripted: ScriptedServer) -> None:
    """A multi-line answer with a tab: Helix's one-line message must not glue lines or show raw tabs."""
    scripted.push(GREETING_EDIT, text("Added a greeting.\nIt prints\thello when main runs.\n\n- one\n- two"))
    editor = helix({"app.py": APP}, "app.py")
    run_agent_comment(editor)
    message = editor.wait_message("the turn's answer", lambda m: m.startswith("agentls"), timeout=15)
    assert "Added a greeting." in message, message
    assert "greeting.It" not in message, f"lines glued together: {message!r}"
    assert not re.search(r"\S {3,}\S", message), f"a raw tab (or a run of spaces) in the message: {message!r}"


def test_lsp_workspace_command_lists_the_agent_commands(helix: Start) -> None:
    editor = helix({"app.py": APP}, "app.py")
    editor.command("lsp-workspace-command")
    screen = "\n".join(editor.tmux.wait("the command picker", lambda s: any("agent.newSession" in line for line in s)))
    for name in ("agent.turn", "agent.interrupt", "agent.compress", "agent.newSession"):
        assert name in screen, screen
    editor.tmux.keys("C-c")  # closes the picker (Escape then ':' would read as Alt-:)


def test_lsp_workspace_command_agent_turn_gives_visible_feedback(helix: Start, scripted: ScriptedServer) -> None:
    """Helix 25.01 sends ``:lsp-workspace-command agent.turn`` with no arguments and shows nothing of an
    executeCommand result or error: agentls must say, in the status line, what it did with it."""
    editor = helix({"app.py": APP}, "app.py")
    editor.command("lsp-workspace-command agent.turn")
    editor.executed("agent.turn")
    message = editor.wait_message("agentls's feedback on agent.turn", lambda m: m.startswith("agentls"), timeout=15)
    assert not re.search(r"\S {3,}\S", message), message
    assert (editor.ws / "app.py").read_text() == APP
    assert turn_requests(scripted) == [], "no prompt, so no model call"


@pytest.mark.parametrize("command", ["agent.newSession", "agent.compress"])
def test_lsp_workspace_commands_give_visible_feedback(helix: Start, scripted: ScriptedServer, command: str) -> None:
    scripted.push(GREETING_EDIT, text("Added a greeting."))
    scripted.push(text("Goal: a greeting.\nDone: added it."), model="purpose:summary")
    editor = helix({"app.py": APP}, "app.py")
    run_agent_comment(editor)
    editor.command("lsp-workspace-command " + command)
    answer = editor.executed(command)
    message = editor.wait_message(f"agentls's feedback on {command}",
                                  lambda m: m.startswith("agentls") and "greeting." not in m, timeout=15)
    assert not re.search(r"\S {3,}\S", message), (message, answer)
