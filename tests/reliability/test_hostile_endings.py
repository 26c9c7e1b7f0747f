"""A file whose lines end in CRLF, a lone CR and LF at once: editing one word changes that line only, and
every other line keeps its own ending, through ``agentls run`` (edit_file, write_file over the file, an
inserted line) and ``agentls acp`` with the disk host (an edit, then ``/undo``). On ``main`` every CR and
CRLF became LF while the diff said one line changed."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from agentls.agent.line_endings import restore, split
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .wire import AcpProc, server_env

MIXED = b"first line\r\nsecond line\rthird word here\nfourth line\r\nfifth\rlast line without ending"


async def agentls_run(home: Path, workspace: Path, srv: ScriptedServer, *args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--base-url", srv.openai_url,
        "--model", "scripted", "--no-persist", "--approval", "yolo", *args, env=server_env(home),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, err.decode()


CHANGES = {
    "edit one word": ([call("read_file", {"path": "m.txt"}),
                       call("edit_file", {"path": "m.txt", "old_string": "word", "new_string": "WORD"})],
                      MIXED.replace(b"word", b"WORD")),
    "edit across lines": ([call("read_file", {"path": "m.txt"}),
                           call("edit_file", {"path": "m.txt", "old_string": "second line\nthird",
                                              "new_string": "2nd line\n3rd"})],
                          MIXED.replace(b"second", b"2nd").replace(b"third", b"3rd")),
    "insert a line": ([call("read_file", {"path": "m.txt"}),
                       call("edit_file", {"path": "m.txt", "old_string": "fourth line\n",
                                          "new_string": "fourth line\ninserted\n"})],
                      MIXED.replace(b"fourth line\r\n", b"fourth line\r\ninserted\r\n")),
    "write_file over it": ([call("read_file", {"path": "m.txt"}),
                            call("write_file", {"path": "m.txt", "content": MIXED.decode().replace("\r\n", "\n")
                                                .replace("\r", "\n").replace("fifth", "FIFTH")})],
                           MIXED.replace(b"fifth", b"FIFTH")),
}


@pytest.mark.parametrize("case", list(CHANGES))
async def test_run_changes_only_the_edited_lines(case: str, srv: ScriptedServer, workspace: Path, home: Path) -> None:
    calls, expected = CHANGES[case]
    (workspace / "m.txt").write_bytes(MIXED)
    srv.push(*(tools(c) for c in calls), text("done"))
    code, err = await agentls_run(home, workspace, srv, "change it")
    assert code == 0, err
    assert (workspace / "m.txt").read_bytes() == expected


async def test_acp_disk_host_edit_and_undo_keep_every_ending(srv: ScriptedServer, workspace: Path,
                                                            home: Path) -> None:
    (workspace / "m.txt").write_bytes(MIXED)
    env = server_env(home, AGENTLS_MODEL="scripted", AGENTLS_BASE_URL=srv.openai_url, AGENTLS_APPROVAL="yolo",
                     AGENTLS_TITLES="prompt")
    acp = await AcpProc.start(env, workspace, stderr=home / "acp.log")
    try:
        await acp.initialize()  # no fs capability: agentls computes and writes the text itself
        sid = await acp.new_session(workspace)
        srv.push(tools(call("read_file", {"path": "m.txt"})),
                 tools(call("edit_file", {"path": "m.txt", "old_string": "word", "new_string": "WORD"})), text("ok"))
        await acp.result("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}, 60)
        assert (workspace / "m.txt").read_bytes() == MIXED.replace(b"word", b"WORD")
        await acp.result("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/undo"}]}, 60)
        assert (workspace / "m.txt").read_bytes() == MIXED
    finally:
        await acp.aclose()


def test_restore_line_by_line() -> None:
    old = "a\r\nb\rc\nd\r\ne"
    assert split(old) == (["a", "b", "c", "d", "e"], ["\r\n", "\r", "\n", "\r\n", ""])
    assert restore(old, "a\nB\nc\nd\ne") == "a\r\nB\rc\nd\r\ne"  # edited in place: its own ending
    assert restore(old, "a\nb\nnew\nc\nd\ne") == "a\r\nb\rnew\rc\nd\r\ne"  # new: the ending before it
    assert restore(old, "a\nb\nc\nd\ne\n") == "a\r\nb\rc\nd\r\ne\r\n"  # a final newline added: the common one
    assert restore(old, "c\nd\n") == "c\nd\r\n" and restore("x\ny\n", "x\nz\n") == "x\nz\n"
    assert restore(old, "a\r\nz") == "a\r\nz"  # text that brings its own CRs is written as it is
