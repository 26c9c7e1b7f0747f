"""Bad input: each gets a JSON-RPC error, and the server and other sessions' turns keep running."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.agent.scripted import ScriptedServer, text

from .raw import RawClient, body_frame


@pytest.fixture
async def raw(srv: ScriptedServer, workspace: Path) -> Any:
    client = await RawClient.start("--max-message-bytes", str(1024 * 1024))
    yield client
    await client.close()


def options(srv: ScriptedServer) -> dict[str, Any]:
    return {"model": "scripted", "baseUrl": srv.openai_url, "approval": "yolo", "titles": "prompt"}


async def test_requests_before_initialize_are_refused(raw: RawClient, srv: ScriptedServer, workspace: Path) -> None:
    answer = await raw.call(1, "agent/newSession", {})
    assert answer["error"]["code"] == -32002 and "initialize" in answer["error"]["message"]
    bad_init = await raw.call(2, "initialize", {"capabilities": "none"})
    assert bad_init["error"]["code"] == -32602
    await raw.initialize(workspace, options(srv))
    again = await raw.call(3, "initialize", {"capabilities": {}})
    assert again["error"]["code"] == -32600


async def test_bad_messages_get_errors_while_another_turn_runs(raw: RawClient, srv: ScriptedServer,
                                                               workspace: Path) -> None:
    await raw.initialize(workspace, options(srv))
    sid = (await raw.call("s", "agent/newSession", {}))["result"]["sessionId"]
    srv.push(text("survived everything", latency=2.0))
    raw.send({"jsonrpc": "2.0", "id": "turn", "method": "agent/turn", "params": {"sessionId": sid, "prompt": "hi"}})

    raw.write(body_frame(b'{"jsonrpc": "2.0", "id": 77, "method": '))  # malformed JSON
    raw.write(body_frame(b"[1, 2, 3]"))  # a batch
    raw.write(body_frame(b'"just a string"'))
    raw.write(b"X-Nonsense: yes\r\n\r\n")  # a frame without Content-Length
    errors = await raw.null_errors(4)
    assert sorted(e["error"]["code"] for e in errors) == [-32700, -32700, -32600, -32600]
    assert all(e["error"]["message"] for e in errors)

    assert (await raw.call(1, "no/suchMethod", {}))["error"]["code"] == -32601
    raw.send({"jsonrpc": "2.0", "method": "no/suchNotification", "params": {}})  # ignored, per LSP
    assert (await raw.call(2, "agent/turn", "not an object"))["error"]["code"] == -32602
    assert (await raw.send_and_code(3, {"jsonrpc": "1.0", "id": 3, "method": "agent/turn"})) == -32600

    huge = b'{"jsonrpc": "2.0", "id": 4, "method": "agent/turn", "params": {"prompt": "' + b"x" * (2 << 20) + b'"}}'
    raw.write(body_frame(huge))
    too_big = await raw.answer(4)
    assert too_big["error"]["code"] == -32600 and "limit" in too_big["error"]["message"]

    result = (await raw.answer("turn"))["result"]
    assert result["finalResponse"] == "survived everything"
    assert (await raw.call(5, "agent/listSessions", {}))["result"]["sessions"]


WRONG: list[tuple[str, dict[str, Any], str]] = [
    ("agent/turn", {"sessionId": 5, "prompt": "x"}, "agent/turn: 'sessionId' must be a string, not a number"),
    ("agent/turn", {"sessionId": "S", "prompt": 5},
     "agent/turn: 'prompt' must be a string or a list of content blocks, not a number"),
    ("agent/turn", {"sessionId": "S"}, "agent/turn: 'prompt' is required"),
    ("agent/turn", {"sessionId": "S", "prompt": [{"type": "video"}]}, "unknown content block type 'video'"),
    ("agent/turn", {"sessionId": "S", "prompt": ""}, "'prompt'"),
    ("agent/turn", {"sessionId": "S", "prompt": "x", "workDoneToken": {}}, "'workDoneToken'"),
    ("agent/steer", {"sessionId": "S"}, "agent/steer: 'text' is required"),
    ("agent/interrupt", {}, "agent/interrupt: 'sessionId' is required"),
    ("agent/compress", {"sessionId": "S", "keepLast": "all"}, "'keepLast' must be a whole number"),
    ("agent/compress", {"sessionId": "S", "preview": "yes"}, "'preview' must be true or false"),
    ("agent/undo", {"sessionId": "S", "turns": 0}, "'turns' must be at least 1"),
    ("agent/newSession", {"cwd": "/no/such/dir"}, "not an existing directory"),
    ("agent/newSession", {"cwd": "relative/dir"}, "absolute path"),
    ("agent/listSessions", {"query": 3}, "'query' must be a string"),
    ("agent/loadSession", {"sessionId": ""}, "'sessionId' must not be empty"),
    ("textDocument/codeAction", {"range": 1}, "textDocument/codeAction: invalid params"),
    ("workspace/executeCommand", {"command": "agent.nope"}, "unknown command 'agent.nope'"),
    ("workspace/executeCommand", {"command": "agent.turn", "arguments": [1, 2]}, "expects one argument"),
]


async def test_wrong_params_answer_32602_with_a_useful_message(raw: RawClient, srv: ScriptedServer,
                                                               workspace: Path) -> None:
    await raw.initialize(workspace, options(srv))
    for i, (method, params, expected) in enumerate(WRONG):
        answer = await raw.call(i, method, params)
        assert answer.get("error", {}).get("code") == -32602, (method, params, answer)
        assert expected in answer["error"]["message"], (expected, answer["error"]["message"])


@pytest.mark.parametrize("method", ["agent/turn", "agent/steer", "agent/interrupt", "agent/compress",
                                    "agent/loadSession", "agent/undo"])
async def test_unknown_sessions(raw: RawClient, srv: ScriptedServer, workspace: Path, method: str) -> None:
    await raw.initialize(workspace, options(srv))
    answer = await raw.call(1, method, {"sessionId": "no-such-session", "prompt": "x", "text": "x"})
    assert answer["error"]["code"] == -32602
    assert "unknown session 'no-such-session'" in answer["error"]["message"]
    assert "newSession" in answer["error"]["message"]
