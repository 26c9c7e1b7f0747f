"""Protocol hygiene: only frames on stdout, JSON-RPC errors for bad input, and the agent keeps serving."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from acp_harness.agent import agent_env
from acp_harness.frames import read_records, validate_frames
from acp_harness.raw import raw_agent

from agentls.agent.scripted import ScriptedServer

INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}},
              "clientInfo": {"name": "raw-test", "version": "0"}}


async def test_bad_frames_get_errors_and_the_agent_keeps_serving(tmp_path: Path) -> None:
    async with ScriptedServer() as srv, raw_agent(tmp_path, agent_env(srv, tmp_path)) as agent:
        await agent.send(b"this is not json\n")
        parse = await agent.recv()
        assert parse["id"] is None and parse["error"]["code"] == -32700
        await agent.send(b"[1, 2, 3]\n")
        assert (await agent.recv())["error"]["code"] == -32600
        await agent.send(b'{"jsonrpc": "2.0", "id": 7, "method": 42}\n')
        bad_method = await agent.recv()
        assert bad_method["id"] == 7 and bad_method["error"]["code"] == -32600
        await agent.send(b'{"id": 8, "method": "initialize"}\n')
        assert (await agent.recv())["error"]["code"] == -32600  # no "jsonrpc": "2.0"
        await agent.send(b"\n   \n")  # blank lines are ignored

        init = await agent.request("initialize", INITIALIZE)
        assert init["result"]["protocolVersion"] == 1

        unknown = await agent.request("session/teleport", {"sessionId": "x"})
        assert unknown["error"]["code"] == -32601
        ext = await agent.request("_nobody/knows", {})
        assert ext["error"]["code"] == -32601
        await agent.send(b'{"jsonrpc": "2.0", "method": "session/unknown_notification", "params": {}}\n')
        bad_params = await agent.request("session/new", {"cwd": 5})
        assert bad_params["error"]["code"] == -32602
        no_params = await agent.request("session/prompt")
        assert no_params["error"]["code"] == -32602
        fork = await agent.request("session/fork", {"sessionId": "x", "cwd": str(tmp_path)})
        assert fork["error"]["code"] == -32002  # supported: an unknown session
        delete = await agent.request("session/delete", {})
        assert delete["error"]["code"] == -32602
        refusal = await agent.request("session/prompt", {"sessionId": "nope",
                                                         "prompt": [{"type": "text", "text": "hi"}]})
        assert refusal["result"] == {"stopReason": "refusal"}
        again = await agent.request("initialize", INITIALIZE)  # the SDK answers this one: same answer
        assert again["result"] == init["result"]
    records = read_records(agent.frames)
    report = validate_frames(records, compaction_declared=False)
    assert not report.errors, report.errors
    assert all(r["raw"].startswith("{") for r in records if r["dir"] == "out")


async def test_initialize_result(tmp_path: Path) -> None:
    """Answered before the SDK and the core load (the agent's own log says in which order), into the log
    file ``AGENTLS_LOG_FILE`` names."""
    log = tmp_path / "agent.log"
    env = agent_env(None, tmp_path, AGENTLS_LOG_FILE=str(log), AGENTLS_LOG_LEVEL="DEBUG")
    async with raw_agent(tmp_path, env) as agent:
        result = (await agent.request("initialize", INITIALIZE))["result"]
        assert "result" in await agent.request("session/list", {})  # served by the SDK, once it is loaded
    lines = log.read_text().splitlines()
    answered = next(i for i, line in enumerate(lines) if "initialize answered" in line)
    loaded = next(i for i, line in enumerate(lines) if "the ACP SDK and the core are loaded" in line)
    assert answered < loaded
    assert "agentls" not in (tmp_path / "stderr.log").read_text()  # the log went to the file only
    caps = result["agentCapabilities"]
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"] == {"image": True, "audio": False, "embeddedContext": True}
    assert caps["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {}, "fork": {}, "delete": {},
                                           "additionalDirectories": {}}
    assert result["_meta"]["steering"]["supported"] is True
    assert result["agentInfo"]["name"] == "agentls"
    assert [m["id"] for m in result["authMethods"]] == ["api-key", "local-model"]


async def test_eof_ends_the_process(tmp_path: Path) -> None:
    async with ScriptedServer() as srv, raw_agent(tmp_path, agent_env(srv, tmp_path)) as agent:
        await agent.request("initialize", INITIALIZE)
        ws = tmp_path / "ws"
        ws.mkdir()
        await agent.request("session/new", {"cwd": str(ws), "mcpServers": []})
        assert agent.process.stdin is not None
        agent.process.stdin.close()
        assert await agent.process.wait() == 0


def test_stdout_is_claimed_for_frames(tmp_path: Path) -> None:
    """After ``claim_stdio`` a print, a warning or a child process writing to fd 1 lands on stderr."""
    script = textwrap.dedent("""
        import os, sys, warnings
        from agentls.server.acp.stdio import claim_stdio
        proto_in, proto_out = claim_stdio()
        print("a stray print")
        warnings.warn("a stray warning")
        os.system("echo a child process; read line; echo got=$line")
        os.write(proto_out, b'{"jsonrpc":"2.0","method":"frame"}\\n')
        os.write(proto_out, os.read(proto_in, 100))
    """)
    done = subprocess.run([sys.executable, "-c", script], check=False, input=b"echo-me\n", capture_output=True, timeout=30,
                          cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert done.returncode == 0, done.stderr
    assert done.stdout == b'{"jsonrpc":"2.0","method":"frame"}\necho-me\n'  # the child could not read stdin
    err = done.stderr.decode()
    assert "a stray print" in err and "a stray warning" in err and "a child process" in err and "got=\n" in err


def test_frame_parser_table() -> None:
    from agentls.server.acp.stdio import parse_frame

    cases = {
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":{}}': None,
        b'{"jsonrpc":"2.0","id":"a","result":{}}': None,
        b'{"jsonrpc":"2.0","method":"note"}': None,
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":3}': -32600,
        b'{"jsonrpc":"2.0","id":true,"method":"x"}': -32600,
        b'{"jsonrpc":"2.0","id":1}': -32600,
        b'{"jsonrpc":"1.0","id":1,"method":"x"}': -32600,
        b'"just a string"': -32600,
        b'{"unterminated': -32700,
    }
    for line, code in cases.items():
        message, error = parse_frame(line)
        if code is None:
            assert message is not None and error is None, line
        else:
            assert error is not None and error["error"]["code"] == code, line
            json.dumps(error)
