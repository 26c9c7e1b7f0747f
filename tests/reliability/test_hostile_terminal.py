"""Terminal escapes in a file, a file name and the model's answer never reach ``agentls run``'s terminal
raw: stdout and stderr show them as ``\\x1b`` text; ``--json`` keeps the exact text (as JSON escapes)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .wire import server_env

EVIL = "title\x1b]0;pwned\x07 clear\x1b[2J\x1b[H clip\x1b]52;c;cm0gLXJmIH4=\x07 c1\x9b31m bell\x07 bidi\u202e end\r"
RAW = [b"\x1b", b"\x07", b"\xc2\x9b", "\u202e".encode(), b"\r"]


async def run(home: Path, workspace: Path, srv: ScriptedServer, *args: str) -> tuple[int, bytes, bytes]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls.server", "run", "-w", str(workspace), "--base-url", srv.openai_url,
        "--model", "scripted", "--no-persist", *args, env=server_env(home),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out, err


async def test_escapes_are_shown_not_obeyed(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    name = "notes\x1b]0;x\x07.txt"
    (workspace / name).write_text(EVIL)
    srv.push(tools(call("read_file", {"path": name})), text("The file says: " + EVIL))
    code, out, err = await run(home, workspace, srv, "read it")
    assert code == 0, err
    for stream in (out, err):
        assert [raw for raw in RAW if raw in stream] == [], stream.decode(errors="replace")
    assert b"\\x1b]0;pwned\\x07" in out and b"\\x1b]52;c;" in out and b"\\x9b31m" in out and b"\\u202e" in out
    assert b"notes\\x1b]0;x\\x07.txt" in err  # the tool line


async def test_json_output_stays_exact(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    srv.push(text(EVIL))
    code, out, err = await run(home, workspace, srv, "--json", "say it")
    assert code == 0, err
    assert [raw for raw in RAW[:4] if raw in out] == []
    assert json.loads(out)["final_response"] == EVIL
