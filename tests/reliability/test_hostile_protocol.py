"""Hostile workspace, class "protocol": a client that breaks JSON-RPC on purpose, through the real processes.

Every request id gets exactly one answer (notifications sent with an id included); a client that
pipelines 20,000 requests and does not read its output cannot grow the server past 100 MB (RSS read
from /proc: a memory bound, not a timing threshold) and is answered in full once it reads; an ACP line
over the cap is refused and the server goes on; no error echoes a client's large params; an ACP request
without a trailing newline before EOF is still answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from .wire import AcpProc, LspProc, RpcProc, body_frame, frame, server_env

PIPELINED = 20_000
RSS_LIMIT = 100 * 1024 * 1024
ECHO_LIMIT = 2_000  # bytes an error answer may take, whatever the request held


def _env(home: Path) -> dict[str, str]:
    return server_env(home, AGENTLS_MODEL="scripted", AGENTLS_BASE_URL="http://127.0.0.1:9/v1",
                      AGENTLS_APPROVAL="yolo")


async def _start(face: str, workspace: Path, home: Path) -> RpcProc:
    if face == "lsp":
        lsp = await LspProc.start(_env(home), workspace, stderr=home / "stderr.log")
        await lsp.initialize(workspace, {"maxRetries": 0})
        return lsp
    acp = await AcpProc.start(_env(home), workspace, stderr=home / "stderr.log")
    await acp.initialize()
    return acp


async def _still_serving(proc: RpcProc) -> None:
    method = "agent/listSessions" if isinstance(proc, LspProc) else "session/list"
    assert "result" in await proc.call(method, {}, 30), "the server stopped serving"


def _answers(proc: RpcProc, msg_id: Any) -> list[dict[str, Any]]:
    return [m for m in proc.messages if "method" not in m and m.get("id") == msg_id
            and type(m.get("id")) is type(msg_id)]


# ---------------------------------------------------------------------- notifications sent with an id
LSP_NOTIFICATIONS = [("initialized", {}), ("$/cancelRequest", {"id": 1}), ("$/setTrace", {"value": "off"}),
                     ("$/anything", {}), ("exit", None), ("workspace/didChangeConfiguration", {"settings": {}}),
                     ("textDocument/didOpen", {"textDocument": {"uri": "file:///tmp/x.py", "languageId": "python",
                                                                "version": 1, "text": "x = 1\n"}}),
                     ("textDocument/didClose", {"textDocument": {"uri": "file:///tmp/x.py"}}),
                     ("window/workDoneProgress/cancel", {"token": "t"})]


async def test_lsp_notifications_sent_with_an_id_are_answered_once(workspace: Path, home: Path) -> None:
    proc = await _start("lsp", workspace, home)
    try:
        ids = [proc.start_request(method, params) for method, params in LSP_NOTIFICATIONS]
        await asyncio.wait_for(asyncio.gather(*(proc.answer(i) for i in ids)), 30)
        await _still_serving(proc)
        for (method, _), msg_id in zip(LSP_NOTIFICATIONS, ids, strict=True):
            answers = _answers(proc, msg_id)
            assert len(answers) == 1, (method, answers)
            assert answers[0]["error"]["code"] == -32600 and "notification" in answers[0]["error"]["message"], answers
        assert proc.alive, "'exit' with an id must not end the server (it is refused, not handled)"
    finally:
        await proc.aclose()


async def test_acp_notifications_sent_with_an_id_are_answered_once(workspace: Path, home: Path) -> None:
    proc = await _start("acp", workspace, home)
    try:
        sid = await proc.new_session(workspace)  # type: ignore[attr-defined]
        ids = [proc.start_request("session/cancel", {"sessionId": sid}),
               proc.start_request("session/cancel", {"sessionId": "nope"})]
        await asyncio.wait_for(asyncio.gather(*(proc.answer(i) for i in ids)), 30)
        await _still_serving(proc)
        assert all(len(_answers(proc, i)) == 1 for i in ids)
    finally:
        await proc.aclose()


# ---------------------------------------------------------------------- ids of every JSON type, duplicates
ODD_IDS: list[Any] = [0, -1, 2 ** 62, "", "x" * 300, "ünïcödé", 1.5, True, False, None, [1], {"a": 1}]


@pytest.mark.parametrize("face", ["lsp", "acp"])
async def test_ids_of_every_json_type_and_duplicates_get_one_answer_each(face: str, workspace: Path,
                                                                          home: Path) -> None:
    proc = await _start(face, workspace, home)
    method = "agent/listSessions" if face == "lsp" else "session/list"
    try:
        before_null = len(proc.null_errors)
        for msg_id in ODD_IDS:
            proc.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {}})
        for _ in range(3):  # the same id three times, in flight together
            proc.send({"jsonrpc": "2.0", "id": "dup", "method": method, "params": {}})
        proc.send({"jsonrpc": "2.0", "id": "dup-note", "method": "initialized" if face == "lsp" else "session/cancel",
                   "params": {} if face == "lsp" else {"sessionId": "x"}})
        await _still_serving(proc)
        await asyncio.sleep(0)
        usable = [i for i in ODD_IDS if isinstance(i, str) or (isinstance(i, int) and not isinstance(i, bool))]
        if face == "acp":
            usable.append(None)  # ACP allows a null id; the answer then has id null too
        for msg_id in usable:
            if msg_id is not None:
                assert len(_answers(proc, msg_id)) == 1, (msg_id, _answers(proc, msg_id))
        assert len(_answers(proc, "dup")) == 3
        assert len(_answers(proc, "dup-note")) == 1
        unusable = len(ODD_IDS) - len([i for i in usable if i is not None])
        assert len(proc.null_errors) - before_null >= unusable - 1  # float/bool/array/object ids: errors, id null
    finally:
        await proc.aclose()


# ---------------------------------------------------------------------- large params are never echoed
@pytest.mark.parametrize("face", ["lsp", "acp"])
async def test_a_10_mb_string_param_is_refused_without_being_echoed(face: str, workspace: Path, home: Path) -> None:
    proc = await _start(face, workspace, home)
    big = "A" * 10_000_000
    try:
        if face == "lsp":
            calls = [("agent/turn", {"sessionId": big, "prompt": big}), ("agent/newSession", {"cwd": [big]}),
                     (big[:5_000_000], {}), ("textDocument/hover", {"textDocument": big, "position": big})]
        else:
            calls = [("session/prompt", {"sessionId": big, "prompt": big}), ("session/new", {"cwd": [big]}),
                     ("_" + big[:5_000_000], {}), ("session/set_mode", {"sessionId": big, "modeId": [big] * 2})]
        for method, params in calls:
            answer = await proc.call(method, params, 60)
            assert "error" in answer, answer.keys()
            assert len(json.dumps(answer)) < ECHO_LIMIT, (method[:20], json.dumps(answer)[:300])
        await _still_serving(proc)
    finally:
        await proc.aclose()


# ---------------------------------------------------------------------- ACP: the line cap, the last line
async def test_acp_a_50_mb_line_gets_a_short_error_and_the_server_goes_on(workspace: Path, home: Path) -> None:
    proc = await _start("acp", workspace, home)
    try:
        line = json.dumps({"jsonrpc": "2.0", "id": "huge", "method": "session/prompt",
                           "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "B" * 50_000_000}]}})
        proc.write(line.encode() + b"\n")
        answer = await asyncio.wait_for(proc.answer("huge"), 120)
        assert answer["error"]["code"] == -32600 and "limit" in answer["error"]["message"], answer
        assert len(json.dumps(answer)) < ECHO_LIMIT
        await _still_serving(proc)
    finally:
        await proc.aclose()


async def test_acp_a_line_cap_set_on_the_command_line(workspace: Path, home: Path) -> None:
    proc = await AcpProc.start(_env(home), workspace, "--max-message-bytes", "100000", stderr=home / "stderr.log")
    try:
        await proc.initialize()
        answer = await proc.call("session/list", {"pad": "x" * 200_000}, 30)
        assert answer["error"]["code"] == -32600 and "100,000" in answer["error"]["message"], answer
        await _still_serving(proc)
    finally:
        await proc.aclose()


@pytest.mark.parametrize("method", ["session/list", "session/new"])
async def test_acp_a_request_without_a_newline_before_eof_is_answered(method: str, workspace: Path,
                                                                      home: Path) -> None:
    proc = await _start("acp", workspace, home)
    try:
        params: dict[str, Any] = {} if method == "session/list" else {"cwd": str(workspace), "mcpServers": []}
        proc.write(json.dumps({"jsonrpc": "2.0", "id": "last", "method": method, "params": params}).encode())
        await proc.drain()
        proc.close_stdin()
        assert await proc.wait(60) == 0
        await asyncio.wait_for(proc.closed.wait(), 30)
        assert len(_answers(proc, "last")) == 1 and "result" in _answers(proc, "last")[0], proc.messages[-3:]
    finally:
        await proc.aclose()


# ---------------------------------------------------------------------- garbage, nesting, lying lengths
@pytest.mark.parametrize("face", ["lsp", "acp"])
async def test_interleaved_garbage_and_deep_nesting_leave_every_request_answered(face: str, workspace: Path,
                                                                                 home: Path) -> None:
    proc = await _start(face, workspace, home)
    method = "agent/listSessions" if face == "lsp" else "session/list"
    wrap = body_frame if face == "lsp" else (lambda b: b + b"\n")
    junk = [b"\x00\xff\xfe", b"{", b"[]", b"[" * 100_000 + b"]" * 100_000,
            b'{"jsonrpc":"2.0","id":"deep","method":"x","params":' + b"[" * 50_000 + b"]" * 50_000 + b"}",
            b'{"jsonrpc":"2.0","id":"notif-with-id","method":"initialized","params":{}}', b"null", b'"str"']
    try:
        ids = []
        for n, garbage in enumerate(junk):
            proc.write(wrap(garbage))
            ids.append(proc.start_request(method, {}, msg_id=f"ok{n}"))
        await asyncio.wait_for(asyncio.gather(*(proc.answer(i) for i in ids)), 60)
        await asyncio.wait_for(proc.answer("deep"), 30)
        await asyncio.wait_for(proc.answer("notif-with-id"), 30)
        for i in [*ids, "deep", "notif-with-id"]:
            assert len(_answers(proc, i)) == 1, i
        assert not proc.garbage
    finally:
        await proc.aclose()


async def test_lsp_a_content_length_that_lies_does_not_lose_later_requests(workspace: Path, home: Path) -> None:
    proc = await _start("lsp", workspace, home)
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": "short", "method": "agent/listSessions", "params": {}}).encode()
        proc.write(b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body)  # says less than it sends
        proc.write(b"Content-Length: 99999999999999999999\r\n\r\n{}")  # more than the cap
        proc.write(b"Content-Length: -5\r\n\r\n")
        proc.write(b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n")  # two lengths
        for _ in range(3):  # resynchronises on the next well-framed message
            await asyncio.sleep(0)
            proc.write(b"\r\n\r\n")
        ids = [proc.start_request("agent/listSessions", {}, msg_id=f"after{n}") for n in range(3)]
        done, _ = await asyncio.wait([proc.answer(i) for i in ids], timeout=30)
        assert proc.alive
        assert len(done) >= 1, "a lying Content-Length must not leave the server deaf for good"
        await _still_serving(proc)
    finally:
        await proc.aclose()


# ---------------------------------------------------------------------- backpressure: a client that does not read
def _rss(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def _read_lsp(stream: asyncio.StreamReader) -> dict[str, Any] | None:
    length = -1
    while True:
        line = await stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(await stream.readexactly(length))  # type: ignore[no-any-return]


async def _read_acp(stream: asyncio.StreamReader) -> dict[str, Any] | None:
    line = await stream.readline()
    return json.loads(line) if line else None


@pytest.mark.parametrize("kind", ["list", "unknown"])
@pytest.mark.parametrize("face", ["lsp", "acp"])
async def test_20000_pipelined_requests_unread_stay_bounded_then_all_answered(face: str, kind: str, workspace: Path,
                                                                              home: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls.server", face, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=open(home / "stderr.log", "ab"), env=_env(home), cwd=str(workspace), limit=1 << 26)  # noqa: ASYNC230
    assert proc.stdin is not None and proc.stdout is not None
    encode = frame if face == "lsp" else (lambda o: json.dumps(o).encode() + b"\n")
    read = _read_lsp if face == "lsp" else _read_acp
    try:
        if face == "lsp":
            init = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
        else:
            init = {"protocolVersion": 1, "clientCapabilities": {}}
        proc.stdin.write(encode({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
        assert (await asyncio.wait_for(read(proc.stdout), 60) or {}).get("id") == 0
        if face == "lsp":
            proc.stdin.write(encode({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        if kind == "list":  # a real request: the session store is asked 20,000 times
            method = "agent/listSessions" if face == "lsp" else "session/list"
        else:
            method = "agent/noSuchMethod" if face == "lsp" else "_agentls/noSuchMethod"
        params: dict[str, Any] = {} if kind == "list" else {"pad": "p" * 200}
        peak = 0

        async def pipeline() -> None:
            for n in range(1, PIPELINED + 1):
                proc.stdin.write(encode({"jsonrpc": "2.0", "id": n, "method": method, "params": params}))
                if n % 500 == 0:
                    await proc.stdin.drain()
            await proc.stdin.drain()

        writer = asyncio.ensure_future(pipeline())
        stalled = 0
        last = -1
        while not writer.done() and stalled < 40:  # until everything is written, or the server stops reading
            await asyncio.sleep(0.1)
            peak = max(peak, _rss(proc.pid))
            size = proc.stdin.transport.get_write_buffer_size()
            stalled = stalled + 1 if size == last else 0
            last = size
        for _ in range(20):  # and a while longer: whatever it read is being handled
            await asyncio.sleep(0.1)
            peak = max(peak, _rss(proc.pid))
        seen: dict[Any, int] = {}
        while len(seen) < PIPELINED:  # now read: everything must be answered, once
            message = await asyncio.wait_for(read(proc.stdout), 60)
            assert message is not None, f"the server closed its output after {len(seen)} answers"
            if "method" not in message:
                seen[message.get("id")] = seen.get(message.get("id"), 0) + 1
            if len(seen) % 1000 == 0:
                peak = max(peak, _rss(proc.pid))
        await writer
        assert set(seen) == set(range(1, PIPELINED + 1)) and max(seen.values()) == 1
        print(f"\n{face} {kind}: {PIPELINED} pipelined, unread: peak RSS {peak / 2 ** 20:.0f} MB; all answered once")
        assert peak < RSS_LIMIT, f"peak RSS {peak / 2 ** 20:.0f} MB"
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
