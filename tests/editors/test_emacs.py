"""The Emacs files in editors/emacs: they byte-compile without warnings, and agentls-eglot.el drives the real
`agentls lsp` through eglot in a batch Emacs (skipped when Emacs or eglot is missing)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools

ROOT = Path(__file__).resolve().parents[2]
ELISP = ROOT / "editors" / "emacs"
EMACS = shutil.which("emacs")
BIN = Path(sys.executable).parent

needs_emacs = pytest.mark.skipif(EMACS is None, reason="emacs is not installed (apt-get install emacs-nox)")


def emacs(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
          timeout: float = 120) -> subprocess.CompletedProcess[str]:
    assert EMACS is not None
    # --no-init-file keeps site-start, which puts Debian's elpa packages (eglot) on the load path.
    return subprocess.run([EMACS, "--batch", "--no-init-file", *args], check=False, cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def has_eglot() -> bool:
    return EMACS is not None and emacs("--eval", "(require 'eglot)").returncode == 0


@needs_emacs
@pytest.mark.parametrize("name", ["agentls-eglot.el", "agentls-agent-shell.el"])
def test_byte_compiles_without_warnings(name: str, tmp_path: Path) -> None:
    if name == "agentls-eglot.el" and not has_eglot():
        pytest.skip("eglot is not available (Emacs 29+ has it; apt-get install elpa-eglot on 28)")
    shutil.copy(ELISP / name, tmp_path / name)
    proc = emacs("--eval", "(setq byte-compile-error-on-warn t)", "-f", "batch-byte-compile", str(tmp_path / name))
    assert proc.returncode == 0, f"byte-compiling {name} failed:\n{proc.stdout}\n{proc.stderr}"
    assert (tmp_path / name).with_suffix(".elc").exists()


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer.run_in_thread() as srv:
        yield srv


@needs_emacs
def test_eglot_turn_against_real_server(tmp_path: Path, scripted: ScriptedServer) -> None:
    """agentls-ask through eglot: a permission answered, an edit applied, the answer in *agentls*, a region
    sent as a resource block."""
    if not has_eglot():
        pytest.skip("eglot is not available")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("A short note.\n")
    scripted.clear()
    scripted.push(
        tools(call("write_file", {"path": "hello.txt", "content": "hello from emacs\n"})),
        text("Wrote hello.txt for you."),
        text("A short note."),
        tools(call("read_file", {"path": "notes.txt"})),
        text("Read it."),
    )
    agentls = shutil.which("agentls", path=str(BIN))
    cmd = [agentls, "lsp"] if agentls else [sys.executable, "-m", "agentls.server", "lsp"]
    proc = emacs("-L", str(ELISP), "-l", str(ROOT / "tests" / "editors" / "emacs" / "test_agentls_eglot.el"),
                 cwd=ws, env={"AGENTLS_CMD": json.dumps(cmd), "AGENTLS_SCRIPTED_URL": scripted.openai_url,
                              "AGENTLS_TEST_KEY": "sk-test", "AGENTLS_DATA_DIR": str(tmp_path / "data"),
                              "AGENTLS_CONFIG": str(tmp_path / "none.toml"),
                              "XDG_CONFIG_HOME": str(tmp_path / "config")})
    output = f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    print(output)
    assert proc.returncode == 0 and "PASS" in proc.stdout, output
    turns = [r for r in scripted.requests if r.headers.get("x-agentls-purpose", "turn") == "turn"]
    region_turn = next(r for r in turns if (r.last_user_text or "").startswith("Summarise this"))
    assert f'<resource uri="{(ws / "notes.txt").as_uri()}">' in (region_turn.last_user_text or "")
    # The read after an unsaved edit saw the edit: agentls-ask flushed eglot's pending didChange first.
    read_result = [m for m in turns[-1].messages if m["role"] == "tool"][-1]
    assert "Unsaved line typed just before asking." in str(read_result["content"]), read_result
    assert not (ws / "notes.txt").read_text().count("Unsaved line"), "the edit stayed in the buffer"
