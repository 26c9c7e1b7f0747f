"""Suite 3: protocol fuzzing of both faces over raw pipes, with our own framing code.

Hypothesis generates the frames (``fuzzgen.py``); they go to a real ``agentls lsp`` and ``agentls acp``
in batches, interleaved with real turns, cancels, steers and interrupts. After every batch the process
must be up and every request with a usable id must have exactly one answer (result or error). At the
end a normal turn must still work, and the server must shut down cleanly.

1,500 frames per face in CI, 10,000 with ``AGENTLS_LONG=1``. The seed is printed; replay with
``AGENTLS_FUZZ_SEED=<seed>``. The frames of a failing batch are written next to the test's tmp dir.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, text
from agentls.agent.sessions.store import SessionStore

from .conftest import LONG
from .fuzzgen import Builder, Frame, generate
from .wire import AcpProc, LspProc, RpcProc, body_frame, marked_pids, server_env

FRAMES = 10_000 if LONG else 1_500
BATCH = 50
ANSWER_TIMEOUT = 20.0  # a deaf (hung) server costs this much CI time, once


def responder(req: RecordedRequest) -> Reply:
    return text(f"echo: {req.last_user_text[:40]}", latency=0.01)


def _dump(path: Path, frames: list[Frame]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for f in frames:
            fh.write(json.dumps({"label": f.label, "expect": f.expect, "bytes": f.data[:2000].decode("latin-1")})
                     + "\n")


async def _start(face: str, srv: ScriptedServer, workspace: Path, home: Path) -> tuple[RpcProc, str]:
    env = server_env(home, AGENTLS_MODEL="scripted", AGENTLS_BASE_URL=srv.openai_url, AGENTLS_TITLES="prompt",
                     AGENTLS_APPROVAL="yolo")
    stderr = home / "stderr.log"
    if face == "lsp":
        lsp = await LspProc.start(env, workspace, stderr=stderr)
        await lsp.initialize(workspace, {"maxRetries": 0})
        return lsp, await lsp.new_session()
    acp = await AcpProc.start(env, workspace, stderr=stderr)
    await acp.initialize()
    return acp, await acp.new_session(workspace)


async def _normal_turn(face: str, proc: RpcProc, session_id: str) -> None:
    if face == "lsp":
        result = await proc.result("agent/turn", {"sessionId": session_id, "prompt": "final check"}, 60)
        assert result["completed"] and result["finalResponse"] == "echo: final check", result
        return
    start = len(proc.updates)
    result = await proc.result("session/prompt", {"sessionId": session_id,
                                                  "prompt": [{"type": "text", "text": "final check"}]}, 60)
    assert result["stopReason"] == "end_turn", result
    said = "".join(u["update"]["content"].get("text", "") for u in proc.updates[start:]
                   if u["sessionId"] == session_id and u["update"]["sessionUpdate"] == "agent_message_chunk")
    assert "echo: final check" in said, said


@pytest.mark.parametrize("face", ["lsp", "acp"])
async def test_fuzzed_frames_never_break_the_server(face: str, srv: ScriptedServer, workspace: Path,
                                                    home: Path, tmp_path: Path) -> None:
    rng_seed = int(os.environ.get("AGENTLS_FUZZ_SEED") or random.SystemRandom().randrange(2 ** 32))
    print(f"\nfuzz {face}: seed={rng_seed} (replay with AGENTLS_FUZZ_SEED={rng_seed})")
    started = time.monotonic()
    batches = generate(FRAMES // BATCH, BATCH, rng_seed)
    srv.set_responder(responder)
    proc, session_id = await _start(face, srv, workspace, home)
    builder = Builder(face, session_id)
    sent = expected = 0
    try:
        for n, batch in enumerate(batches):
            frames = [builder.build(op) for op in batch]
            waiting = {f.expect: f for f in frames if f.expect is not None}
            pending: set[Any] = set()
            try:
                for f in frames:
                    if proc.closed.is_set():  # it died: stop here and report
                        break
                    proc.write(f.data)
                    await asyncio.wait_for(proc.drain(), ANSWER_TIMEOUT)
                _, pending = await asyncio.wait([proc.answer(i) for i in waiting], timeout=ANSWER_TIMEOUT)
            except TimeoutError:
                pending = {None}  # it stopped reading its input
            sent += len(frames)
            expected += len(waiting)
            if pending or not proc.alive:
                dump = tmp_path / f"fuzz-{face}-batch{n}.jsonl"
                _dump(dump, frames)
                unanswered = [f.label[:120] for i, f in waiting.items() if not proc.answer(i).done()
                              or proc.answer(i).exception() is not None]
                log = (home / "stderr.log").read_text(errors="replace")[-3000:]
                state = f"DEAD (exit {proc.proc.returncode})" if not proc.alive else \
                    "up but not reading its input" if None in pending else "up"
                pytest.fail(f"{face}: after batch {n} (frames {sent - len(frames)}-{sent}, seed {rng_seed}) the "
                            f"process is {state}; "
                            f"{len(unanswered)} request(s) got no answer: {unanswered[:8]}\nframes: {dump}\n"
                            f"server log tail:\n{log}")
        assert not proc.garbage, f"the server wrote lines that are not JSON-RPC messages: {proc.garbage[:3]}"
        twice = {i: c for i, c in proc.answer_counts.items() if c > 1}
        assert not twice, f"requests answered more than once: {twice}"
        if not builder.closed_session:
            await _normal_turn(face, proc, session_id)
        fresh = await proc.new_session(workspace) if isinstance(proc, AcpProc) else await proc.new_session()
        await _normal_turn(face, proc, fresh)
        if isinstance(proc, LspProc):
            code = await proc.shutdown()
        else:
            proc.close_stdin()
            code = await proc.wait(30)
        assert code == 0, f"exit code {code}"
        assert not marked_pids(proc.mark), "the server left processes behind"
    finally:
        await proc.aclose()
    print(f"fuzz {face}: seed={rng_seed}, {sent} frames ({expected} requests with an id, all answered once; "
          f"{len(proc.null_errors)} errors with id null), process stayed up, normal turns afterwards ok, "
          f"clean exit, {time.monotonic() - started:.1f}s")


# ---------------------------------------------------------------------- the failures fuzzing found, pinned
DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("face", ["lsp", "acp"])
async def test_deeply_nested_json_gets_an_error_and_the_server_keeps_serving(face: str, srv: ScriptedServer,
                                                                            workspace: Path, home: Path) -> None:
    """100,000 nested arrays are valid JSON that ``json.loads`` cannot parse (RecursionError, which is not
    a ValueError): the frame must be answered like any unparsable one, not end the server."""
    srv.set_responder(responder)
    proc, session_id = await _start(face, srv, workspace, home)
    try:
        body = b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": ' + DEEP + b"}"
        proc.write(body_frame(body) if face == "lsp" else body + b"\n")
        answer = await asyncio.wait_for(asyncio.shield(proc.answer(7)), 10)
        assert "error" in answer, answer
        await _normal_turn(face, proc, session_id)
    except (TimeoutError, ConnectionError):
        await asyncio.sleep(0.5)
        pytest.fail(f"{face}: no answer after a deeply nested frame; the server is "
                    f"{'alive but deaf' if proc.alive else 'dead'}")
    finally:
        await proc.aclose()


async def test_cancel_request_with_a_non_scalar_id_is_ignored(srv: ScriptedServer, workspace: Path,
                                                              home: Path) -> None:
    """``$/cancelRequest {"id": [1]}`` (after ``initialized``) must be ignored or refused, not end the loop."""
    srv.set_responder(responder)
    proc, session_id = await _start("lsp", srv, workspace, home)
    try:
        for bad in ([1], {"id": 1}, 1.5, None, True):
            proc.notify("$/cancelRequest", {"id": bad})
        await asyncio.wait_for(proc.result("agent/listSessions", {}), 10)
        await _normal_turn("lsp", proc, session_id)
    except (TimeoutError, ConnectionError):
        pytest.fail(f"no answer after $/cancelRequest with a list id; the server is "
                    f"{'alive but deaf' if proc.alive else 'dead'}")
    finally:
        await proc.aclose()


async def test_a_write_cancelled_as_it_begins_does_not_wedge_the_store(tmp_path: Path) -> None:
    """Fuzzing found every later turn failing with "cannot start a transaction within a transaction":
    a ``$/cancelRequest`` (or an interrupt) that lands while the store runs ``BEGIN IMMEDIATE`` leaves the
    shared connection inside that transaction. Here the same cancellation, at each point in turn."""
    async with SessionStore(tmp_path / "sessions.db") as store:
        await store.create_session(session_id="s", cwd=str(tmp_path), model="m", system_prompt="p")
        for ticks in range(8):
            write = asyncio.ensure_future(store.update_session("s", title=f"title {ticks}"))
            for _ in range(ticks):
                await asyncio.sleep(0)
            write.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await write
            try:
                await store.update_session("s", title="the next write")
            except Exception as exc:
                pytest.fail(f"cancelled after {ticks} loop turns, the store is wedged: {type(exc).__name__}: {exc}")
