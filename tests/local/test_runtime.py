"""LocalModelServer failure paths, without the real model: each gives a clear error and leaves no child."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from agentls.agent.local.runtime import LocalModelError, LocalModelServer


async def test_constructing_opens_nothing_and_stop_is_idempotent(tmp_path: Path) -> None:
    server = LocalModelServer(tmp_path / "any.gguf", log_path=tmp_path / "log")
    assert not server.running and server.pid is None and server.base_url is None
    assert server.model_name == "any"
    await server.stop()
    await server.close()
    assert not (tmp_path / "log").exists()


async def test_missing_user_model_is_a_clear_error(tmp_path: Path) -> None:
    server = LocalModelServer(tmp_path / "nope.gguf", log_path=tmp_path / "log")
    with pytest.raises(LocalModelError, match=r"not found: .*nope\.gguf"):
        await server.start()
    assert server.pid is None


async def test_a_file_that_is_not_a_gguf_fails_with_the_log_tail(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"definitely not a GGUF file" * 10)
    log = tmp_path / "logs" / "server.log"
    server = LocalModelServer(bad, log_path=log)
    with pytest.raises(LocalModelError) as info:
        await server.start()
    text = str(info.value)
    assert "failed to start" in text or "exited during start-up" in text
    assert str(log) in text  # the log's last lines are in the message
    assert server.pid is None and not server.running
    # a second attempt keeps the first log as .1
    with pytest.raises(LocalModelError):
        await server.start()
    assert log.with_name("server.log.1").exists()


def _fake_python(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-python"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.mark.skipif(sys.platform == "win32", reason="uses a shell script as the interpreter")
async def test_child_dying_without_a_word(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(sys, "executable", _fake_python(tmp_path, "echo 'Killed' >&2; exit 137"))
    server = LocalModelServer(model, log_path=tmp_path / "log")
    with pytest.raises(LocalModelError, match=r"exited during start-up \(exit status 137\)") as info:
        await server.start()
    assert "Killed" in str(info.value) and server.pid is None


@pytest.mark.skipif(sys.platform == "win32", reason="uses a shell script as the interpreter")
async def test_start_timeout_kills_the_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    pid_file = tmp_path / "pid"
    monkeypatch.setattr(sys, "executable", _fake_python(tmp_path, f"echo $$ > {pid_file}; exec sleep 60"))
    server = LocalModelServer(model, log_path=tmp_path / "log", startup_timeout=0.5)
    with pytest.raises(LocalModelError, match="did not start within"):
        await server.start()
    assert server.pid is None
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped, not a zombie


@pytest.mark.skipif(sys.platform == "win32", reason="uses a shell script as the interpreter")
async def test_garbage_on_the_announce_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(sys, "executable", _fake_python(tmp_path, "echo 'hello there'; sleep 60"))
    server = LocalModelServer(model, log_path=tmp_path / "log")
    with pytest.raises(LocalModelError, match="unexpected output"):
        await server.start()
    assert server.pid is None
