"""Hostile workspace, class 2: special files and unbounded reads.

A FIFO, a character device (``/dev/zero``-like) and a socket sit in the workspace, under every name a
reader opens: a file the model asks for, files a search walks over, ``AGENTS.md`` at the root and in a
subdirectory, ``.gitignore``, ``.agentls.toml``, a document a code action looks at. None of them may be
opened for reading (a FIFO blocks the open for good, a device never ends): read_file answers a clear
error, search and list report what they skipped, the loaders log it, the server stays responsive. Reads
are bounded: ``read_file`` with ``limit=3`` on a 200 MB file reads a few KB, a search over 100,000 files
says where it stopped. And when a tool step does take long, an interrupt (LSP), ``session/cancel`` and
EOF (ACP) and Ctrl-C (``agentls run``) end the turn.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import LONG
from .hostile import (
    FACES,
    KIND_WORDS,
    SPECIAL,
    acp_server,
    limited_command,
    lsp_server,
    make_fifo,
    one_turn,
    rchar,
    run_cli,
    run_env,
    shown_messages,
)
from .wire import marked_pids


@pytest.mark.parametrize("kind", sorted(SPECIAL))
async def test_read_file_refuses_a_special_file_at_once(kind: str, srv: ScriptedServer, workspace: Path,
                                                        home: Path) -> None:
    SPECIAL[kind](workspace / "special")
    turn = await one_turn("lsp", srv, workspace, home, call("read_file", {"path": "special"}),
                          call("edit_file", {"path": "special", "old_string": "a", "new_string": "b"}),
                          call("write_file", {"path": "special", "content": "x"}),
                          call("read_file", {"path": "notes.md"}))
    assert turn.answer["completed"], turn.answer
    read, edit, write, control = turn.results
    for result in (read, edit, write):
        assert result.startswith("error") and KIND_WORDS[kind] in result and "not a regular file" in result, result
    assert "- one" in control
    assert Path(workspace / "special").exists() and not (workspace / "special").is_file()  # nothing replaced it


@pytest.mark.parametrize("face", FACES)
async def test_read_file_of_a_fifo_through_every_face(face: str, srv: ScriptedServer, workspace: Path,
                                                      home: Path) -> None:
    make_fifo(workspace / "pipe")
    turn = await one_turn(face, srv, workspace, home, call("read_file", {"path": "pipe"}),
                          call("read_file", {"path": "README.md"}))
    fifo, readme = turn.results
    assert fifo.startswith("error") and "is a FIFO (named pipe), not a regular file" in fifo, fifo
    assert "Demo" in readme
    assert turn.answer in ("end_turn", 0) or turn.answer["completed"]


async def test_search_and_list_skip_and_count_special_files(srv: ScriptedServer, workspace: Path,
                                                            home: Path) -> None:
    for kind, make in SPECIAL.items():
        (workspace / "src" / kind).parent.mkdir(exist_ok=True)
        make(workspace / "src" / f"{kind}.py")
    turn = await one_turn("lsp", srv, workspace, home, call("search_files", {"pattern": "hello"}),
                          call("search_files", {"pattern": "hello", "glob": "*.py"}),
                          call("search_files", {"pattern": "x", "path": "src/fifo.py"}), call("list_dir", {}))
    everything, py_only, direct, listing = turn.results
    for result in (everything, py_only):
        assert "src/app.py:2:" in result, result
        assert "3 not regular files (FIFO, device or socket) skipped" in result, result
        for kind in SPECIAL:
            assert f"src/{kind}.py" in result
    assert direct.startswith("error") and "FIFO" in direct, direct
    assert "fifo.py  [FIFO: not a regular file, not readable]" in listing, listing
    assert "socket.py  [socket" in listing and "device.py  [character device" in listing, listing
    assert "3 entries are not a regular file" in listing


async def test_a_fifo_gitignore_does_not_hang_list_or_search(srv: ScriptedServer, workspace: Path,
                                                            home: Path) -> None:
    make_fifo(workspace / ".gitignore")
    make_fifo(workspace / "src" / ".gitignore")
    turn = await one_turn("lsp", srv, workspace, home, call("list_dir", {}),
                          call("search_files", {"pattern": "greet"}), timeout=30)
    listing, search = turn.results
    assert "README.md" in listing and "src/app.py:1:" in search
    assert "not reading" in turn.stderr and ".gitignore" in turn.stderr


async def test_fifo_hint_and_root_context_files_are_skipped_and_logged(srv: ScriptedServer, workspace: Path,
                                                                       home: Path) -> None:
    make_fifo(workspace / "AGENTS.md")
    make_fifo(workspace / "src" / "AGENTS.md")
    (workspace / "src" / "CLAUDE.md").write_text("not a hint name\n")
    turn = await one_turn("lsp", srv, workspace, home, call("read_file", {"path": "src/app.py"}), timeout=30)
    assert turn.answer["completed"]
    assert "def greet" in turn.results[0]
    log = turn.stderr
    assert "AGENTS.md" in log and "FIFO" in log, log[-2000:]
    assert log.count("not reading the hint file") == 1, "the hint FIFO must be looked at once, then remembered"


@pytest.mark.parametrize("face", FACES)
async def test_a_fifo_named_agentls_toml_does_not_deafen_the_server(face: str, srv: ScriptedServer,
                                                                    workspace: Path, home: Path) -> None:
    """The settings loader reads ``.agentls.toml`` at startup and for each session: a FIFO there is reported
    (naming the file) like any unreadable settings file, never opened."""
    make_fifo(workspace / ".agentls.toml")
    if face == "lsp":  # bad settings files are reported and left out; the server goes on
        async with lsp_server(srv, workspace, home, timeout=20) as lsp:
            sid = await lsp.new_session()
            srv.push(tools(call("read_file", {"path": "notes.md"})), text("done"))
            assert (await lsp.result("agent/turn", {"sessionId": sid, "prompt": "go"}, 30))["completed"]
            said = "\n".join(shown_messages(lsp))
            assert await lsp.shutdown() == 0
    elif face == "acp":  # a session in a workspace with bad settings is refused, in words; the server goes on
        async with acp_server(srv, workspace, home, timeout=20) as acp:
            answer = await acp.call("session/new", {"cwd": str(workspace), "mcpServers": []}, 20)
            said = str(answer.get("error"))
            assert "result" in await acp.call("session/list", {}, 20)
            acp.close_stdin()
            assert await acp.wait(20) == 0
    else:  # bad settings: exit 2, in words
        code, _, said = await run_cli(srv, workspace, home, "go", timeout=30)
        assert code == 2, said
    assert ".agentls.toml" in said and "is a FIFO (named pipe), not a regular file" in said, said


async def test_a_code_action_on_a_fifo_answers(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    fifo = make_fifo(workspace / "pipe.py")
    async with lsp_server(srv, workspace, home) as lsp:
        answer = await lsp.call("textDocument/codeAction", {
            "textDocument": {"uri": fifo.as_uri()}, "range": {"start": {"line": 0, "character": 0},
                                                               "end": {"line": 5, "character": 0}},
            "context": {"diagnostics": []}}, 20)
        assert answer.get("result") in ([], None), answer
        assert await lsp.shutdown() == 0


async def test_read_file_with_a_limit_reads_a_few_lines_of_a_200_mb_file(srv: ScriptedServer, workspace: Path,
                                                                         home: Path) -> None:
    big = workspace / "big.log"
    with big.open("wb") as f:
        f.write(b"".join(b"line %d\n" % i for i in range(1, 20_001)))  # a text head, then a sparse tail
        f.truncate(200 * 1024 * 1024)
    srv.push(tools(call("read_file", {"path": "big.log", "limit": 3})),
             tools(call("read_file", {"path": "big.log", "offset": 19_999, "limit": 2})), text("done"))
    async with lsp_server(srv, workspace, home) as lsp:
        sid = await lsp.new_session()
        await lsp.result("agent/listSessions", {})  # the store is open: what follows is the turn's own reading
        before = rchar(lsp.proc.pid)
        result = await lsp.result("agent/turn", {"sessionId": sid, "prompt": "peek"}, 60)
        read = rchar(lsp.proc.pid) - before
        assert await lsp.shutdown() == 0
    assert result["completed"], result
    head, deep = [str(m["content"]) for m in srv.requests[-1].messages if m["role"] == "tool"]
    assert head.splitlines()[:3] == ["     1\tline 1", "     2\tline 2", "     3\tline 3"], head
    assert "[showing lines 1-3 of a 200.0 MB file; more follow" in head, head
    assert "19999\tline 19999" in deep and "20000\tline 20000" in deep, deep
    assert read < 16 * 1024 * 1024, f"the server read {read:,} bytes for two small windows of a 200 MB file"
    print(f"\nbounded read: 2 windows of a 200 MB file read {read:,} bytes")


async def test_a_search_over_100k_files_says_where_it_stopped(srv: ScriptedServer, workspace: Path,
                                                              home: Path) -> None:
    count = 100_000
    tree = workspace / "tree"
    for d in range(100):
        sub = tree / f"d{d:03}"
        sub.mkdir(parents=True)
        for f in range(count // 100):
            (sub / f"f{f:04}.txt").write_bytes(b"needle\n" if f == 999 else b"hay\n")
    started = time.monotonic()
    turn = await one_turn("lsp", srv, workspace, home, call("search_files", {"pattern": "needle", "path": "tree"}),
                          timeout=240)
    result = turn.results[0]
    assert "STOPPED after 20,000 files at tree/d020/f0000.txt" in result, result[-600:]
    assert "files after it were NOT searched" in result
    assert result.count("needle") == 20, result[:2000]  # d000..d019 each hold one
    print(f"\n100k files: {result.splitlines()[-1][:160]} ({time.monotonic() - started:.1f}s)")


# ----------------------------------------------------------------------------- ending a turn
async def _tool_started(proc: object, kind: str = "tool_call", timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not any(u["update"].get("sessionUpdate") == kind for u in proc.updates):  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, "the tool call was never announced"
        await asyncio.sleep(0.02)


async def test_agent_interrupt_ends_a_turn_that_met_a_fifo(srv: ScriptedServer, workspace: Path,
                                                           home: Path) -> None:
    make_fifo(workspace / "pipe")
    srv.push(tools(call("read_file", {"path": "pipe"})), text("far too late", latency=60))
    async with lsp_server(srv, workspace, home) as lsp:
        sid = await lsp.new_session()
        turn = lsp.start_request("agent/turn", {"sessionId": sid, "prompt": "read the pipe"})
        await _tool_started(lsp)
        await asyncio.sleep(0.3)
        assert (await lsp.result("agent/interrupt", {"sessionId": sid}, 10))["interrupted"]
        answer = await asyncio.wait_for(lsp.answer(turn), 15)
        assert answer["result"]["interrupted"], answer
        assert await lsp.shutdown(15) == 0
        assert not marked_pids(lsp.mark)


@pytest.mark.parametrize("how", ["cancel", "eof"])
async def test_acp_cancel_and_eof_end_a_turn_that_met_a_fifo(how: str, srv: ScriptedServer, workspace: Path,
                                                             home: Path) -> None:
    make_fifo(workspace / "pipe")
    srv.push(tools(call("read_file", {"path": "pipe"})), text("far too late", latency=60))
    async with acp_server(srv, workspace, home) as acp:
        sid = await acp.new_session(workspace)
        prompt = acp.start_request("session/prompt", {"sessionId": sid,
                                                      "prompt": [{"type": "text", "text": "read the pipe"}]})
        await _tool_started(acp)
        await asyncio.sleep(0.3)
        if how == "cancel":
            acp.notify("session/cancel", {"sessionId": sid})
            answer = await asyncio.wait_for(acp.answer(prompt), 15)
            assert answer["result"]["stopReason"] == "cancelled", answer
            acp.close_stdin()
        else:
            acp.close_stdin()
        assert await acp.wait(15) == 0
        assert not marked_pids(acp.mark)


async def test_ctrl_c_ends_agentls_run_that_met_a_fifo(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    make_fifo(workspace / "pipe")
    srv.push(tools(call("read_file", {"path": "pipe"})), text("far too late", latency=60))
    proc = await asyncio.create_subprocess_exec(
        *limited_command("run", "-w", str(workspace), "read the pipe"), env=run_env(home, srv), cwd=str(workspace),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stderr is not None
        seen = b""
        while b"Read pipe" not in seen:
            line = await asyncio.wait_for(proc.stderr.readline(), 30)
            assert line, f"agentls run ended before the tool call: {seen!r}"
            seen += line
        await asyncio.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(proc.communicate(), 15)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 130, (seen + err).decode()
    assert b"far too late" not in out


@pytest.mark.skipif(not LONG, reason="AGENTLS_LONG=1: every special file under every face")
@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("kind", sorted(SPECIAL))
async def test_long_every_special_file_under_every_face(face: str, kind: str, srv: ScriptedServer,
                                                        workspace: Path, home: Path) -> None:
    SPECIAL[kind](workspace / "special")
    SPECIAL[kind](workspace / "src" / "AGENTS.md")
    turn = await one_turn(face, srv, workspace, home, call("read_file", {"path": "special"}),
                          call("search_files", {"pattern": "greet"}), call("list_dir", {}),
                          call("read_file", {"path": "src/app.py"}))
    read, search, listing, app = turn.results
    assert read.startswith("error") and KIND_WORDS[kind] in read
    assert "not regular files" in search and "src/app.py:1:" in search
    assert "not a regular file" in listing and "def greet" in app
    os.unlink(workspace / "special")
