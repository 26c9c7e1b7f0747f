"""Hostile workspace, class 1: writes.

A write must land in the workspace file it names and nowhere else, whatever the repository carries or a
concurrent program does meanwhile: a symlink planted at the temporary name (the one a writer used to
choose), at the target, at a parent directory; a hard link to a file outside; the file replaced by a
directory while the user decides; the file changed by another program since it was read. The file's
mode survives. And concurrent edits (sessions of one server, several processes) are never lost while
reported as done: each result says the truth, and the failing case of issue 13 (six sessions of one
server editing different lines of one file, 15 rounds: 74 of 90 lost on ``main``) loses none.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.disk_host import DiskHost
from agentls.agent.scripted import RecordedRequest, Reply, ScriptedServer, call, text, tools

from .conftest import LONG
from .hostile import FACES, acp_server, lsp_server, one_turn, run_cli, run_env

SECRET = "# the user's real ~/.bashrc\nexport PATH=/usr/bin\n"


def outside_file(tmp_path: Path, name: str = "bashrc") -> Path:
    out = tmp_path / "outside"
    out.mkdir(exist_ok=True)
    target = out / name
    target.write_text(SECRET)
    return target


@pytest.mark.parametrize("face", FACES)
async def test_a_symlink_at_the_old_temp_name_is_never_followed(face: str, srv: ScriptedServer, workspace: Path,
                                                                home: Path, tmp_path: Path) -> None:
    """The issue's case: ``.NAME.agentls-tmp`` links to ``~/.bashrc`` (a repository can carry that)."""
    victim = outside_file(tmp_path)
    (workspace / ".notes.md.agentls-tmp").symlink_to(victim)
    (workspace / "src" / ".new.py.agentls-tmp").symlink_to(victim)
    turn = await one_turn(face, srv, workspace, home, call("read_file", {"path": "notes.md"}),
                          call("edit_file", {"path": "notes.md", "old_string": "- one", "new_string": "- uno"}),
                          call("write_file", {"path": "src/new.py", "content": "print('new')\n"}))
    assert victim.read_text() == SECRET, "the write went through the planted symlink"
    assert all(r.startswith(("Edited", "Created")) for r in turn.results[1:]), turn.results
    for path in (workspace / "notes.md", workspace / "src" / "new.py"):
        assert path.is_file() and not path.is_symlink()
    assert "- uno" in (workspace / "notes.md").read_text()
    assert (workspace / ".notes.md.agentls-tmp").is_symlink()  # left alone, never opened
    assert sorted(p.name for p in workspace.iterdir() if ".agentls-" in p.name) == [".notes.md.agentls-tmp"]


async def test_a_symlink_at_the_chosen_temp_name_is_never_opened(workspace: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a temporary name someone guessed (here: every name) is opened O_EXCL|O_NOFOLLOW: no write."""
    from agentls.agent import safe_write

    victim = outside_file(tmp_path)
    (workspace / ".guessed").symlink_to(victim)
    monkeypatch.setattr(safe_write, "temp_name", lambda name: ".guessed")
    outcome = await DiskHost(workspace).write_text(workspace / "notes.md", "pwned\n",
                                                   previous=(workspace / "notes.md").read_text())
    assert not outcome.applied and "temporary name" in (outcome.message or ""), outcome
    assert victim.read_text() == SECRET and "pwned" not in (workspace / "notes.md").read_text()


class Swapper:
    """The user takes a moment to decide; meanwhile ``swap`` changes the workspace. Then: allow."""

    def __init__(self, swap: Any) -> None:
        self.swap = swap
        self.asked = 0

    def __call__(self, params: Any) -> Any:
        self.asked += 1
        self.swap()
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


async def _asked_turn(srv: ScriptedServer, ws: Path, home: Path, swapper: Swapper, *calls: Any) -> list[str]:
    srv.push(tools(*calls), text("done"))
    async with lsp_server(srv, ws, home, options={"approval": "ask"},
                          agent={"updates": True, "permissions": True}) as lsp:
        lsp.handlers["agent/requestPermission"] = swapper
        sid = await lsp.new_session()
        result = await lsp.result("agent/turn", {"sessionId": sid, "prompt": "go"}, 60)
        assert result["completed"], result
        assert await lsp.shutdown() == 0
    assert swapper.asked == sum(c.name != "read_file" for c in calls)
    return [str(m["content"]) for m in srv.requests[-1].messages if m["role"] == "tool"]


async def test_target_swapped_for_a_symlink_out_while_the_user_decides(srv: ScriptedServer, workspace: Path,
                                                                       home: Path, tmp_path: Path) -> None:
    victim = outside_file(tmp_path)
    target = workspace / "notes.md"

    def swap() -> None:
        target.unlink()
        target.symlink_to(victim)

    (_, result) = await _asked_turn(srv, workspace, home, Swapper(swap), call("read_file", {"path": "notes.md"}),
                                    call("edit_file", {"path": "notes.md", "old_string": "- one", "new_string": "- 1"}))
    assert result.startswith("error") and "outside the workspace" in result, result
    assert victim.read_text() == SECRET and target.is_symlink()


async def test_parent_swapped_for_a_symlink_out_while_the_user_decides(srv: ScriptedServer, workspace: Path,
                                                                       home: Path, tmp_path: Path) -> None:
    victim = outside_file(tmp_path, "app.py")
    src = workspace / "src"

    def swap() -> None:
        src.rename(workspace / "src.moved")
        src.symlink_to(victim.parent)

    (_, result) = await _asked_turn(srv, workspace, home, Swapper(swap), call("read_file", {"path": "src/app.py"}),
                                    call("write_file", {"path": "src/app.py", "content": "pwned = True\n"}))
    assert result.startswith("error") and "outside the workspace" in result, result
    assert victim.read_text() == SECRET
    assert sorted(p.name for p in victim.parent.iterdir()) == ["app.py"], "a temporary file landed outside"


async def test_file_replaced_by_a_directory_while_the_user_decides(srv: ScriptedServer, workspace: Path,
                                                                   home: Path) -> None:
    target = workspace / "notes.md"

    def swap() -> None:
        target.unlink()
        target.mkdir()
        (target / "inner.txt").write_text("kept\n")

    (_, result) = await _asked_turn(srv, workspace, home, Swapper(swap), call("read_file", {"path": "notes.md"}),
                                    call("edit_file", {"path": "notes.md", "old_string": "- one", "new_string": "- 1"}))
    assert result.startswith("error") and "directory" in result and "unexpectedly" not in result, result
    assert (target / "inner.txt").read_text() == "kept\n"


async def test_a_change_by_another_program_while_the_user_decides(srv: ScriptedServer, workspace: Path,
                                                                  home: Path) -> None:
    """Another program edits the file during the prompt: an edit that still fits is applied to the new text
    (the other change survives); one that no longer fits fails and says so; nothing is overwritten."""
    target = workspace / "notes.md"
    edits = iter(["# Notes\n\n- one\n- two\n- three (added by the user)\n", "# Notes\n\n- ONE\n- two\n"])

    def other_program() -> None:
        target.write_text(next(edits))

    _, fits, stale = await _asked_turn(
        srv, workspace, home, Swapper(other_program), call("read_file", {"path": "notes.md"}),
        call("edit_file", {"path": "notes.md", "old_string": "- two", "new_string": "- 2"}),
        call("edit_file", {"path": "notes.md", "old_string": "- one", "new_string": "- 1"}))
    assert fits.startswith("Edited") and "changed since it was read" in fits, fits
    assert "was not applied" in stale and "no longer fits" in stale, stale
    assert target.read_text() == "# Notes\n\n- ONE\n- two\n", "the other program's text must stay"


async def test_a_hard_link_out_is_not_written_through_and_is_reported(srv: ScriptedServer, workspace: Path,
                                                                      home: Path, tmp_path: Path) -> None:
    victim = outside_file(tmp_path)
    os.link(victim, workspace / "linked.sh")
    turn = await one_turn("run", srv, workspace, home, call("read_file", {"path": "linked.sh"}),
                          call("edit_file", {"path": "linked.sh", "old_string": "/usr/bin", "new_string": "/evil"}))
    (_, result) = turn.results
    assert result.startswith("Edited") and "1 other hard link" in result, result
    assert victim.read_text() == SECRET
    assert "/evil" in (workspace / "linked.sh").read_text() and os.stat(victim).st_nlink == 1


async def test_the_file_mode_is_kept(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    script, secret = workspace / "run.sh", workspace / "secret.env"
    script.write_text("#!/bin/sh\necho one\n")
    script.chmod(0o755)
    secret.write_text("TOKEN=1\n")
    secret.chmod(0o600)
    turn = await one_turn("lsp", srv, workspace, home, call("read_file", {"path": "run.sh"}),
                          call("read_file", {"path": "secret.env"}),
                          call("edit_file", {"path": "run.sh", "old_string": "one", "new_string": "two"}),
                          call("write_file", {"path": "secret.env", "content": "TOKEN=2\n"}))
    assert all(r.startswith(("Edited", "Wrote")) for r in turn.results[2:]), turn.results
    assert stat.S_IMODE(script.stat().st_mode) == 0o755 and "two" in script.read_text()
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and secret.read_text() == "TOKEN=2\n"


# ----------------------------------------------------------------------------- concurrent edits
def shared_file(sessions: int, rounds: int) -> str:
    """One line per session, one token per round: ``k3r07=0`` becomes ``k3r07=1`` when its edit lands."""
    return "".join(" ".join(f"k{k}r{r:02}=0" for r in range(rounds)) + "\n" for k in range(sessions))


def edit_responder(rounds: int, seed: int) -> Any:
    rng = random.Random(seed)

    def reply(req: RecordedRequest) -> Reply:
        messages = req.messages
        last = max(i for i, m in enumerate(messages) if m.get("role") == "user" and isinstance(m.get("content"), str))
        k = int(messages[last]["content"].split()[-1])
        r = sum(1 for m in messages[last:] if m.get("role") == "assistant")
        latency = rng.uniform(0, 0.01)
        if r >= rounds:
            return text(f"session {k} done", latency=latency)
        edit = call("edit_file", {"path": "shared.txt", "old_string": f"k{k}r{r:02}=0", "new_string": f"k{k}r{r:02}=1"})
        if r == 0:  # read before the first edit (docs/loop.md §9.7); later edits' exact text is still there once
            return tools(call("read_file", {"path": "shared.txt"}), edit, latency=latency)
        return tools(edit, latency=latency)
    return reply


def judge(results: dict[int, list[str]], final: str, rounds: int) -> dict[str, int]:
    """Lost: reported "Edited" but not in the file. Lies: reported a failure but in the file."""
    edited = lost = failed = lies = 0
    for k, texts in results.items():
        assert len(texts) == rounds, (k, texts)
        for r, result in enumerate(texts):
            landed = f"k{k}r{r:02}=1" in final
            if result.startswith("Edited"):
                edited += 1
                lost += not landed
            else:
                failed += 1
                lies += landed
    return {"edited": edited, "lost": lost, "failed": failed, "lies": lies}


def session_results(requests: list[RecordedRequest]) -> dict[int, list[str]]:
    """The tool results of each session's last request (its whole turn)."""
    out: dict[int, list[str]] = {}
    for req in requests:
        users = [m for m in req.messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
        if not users or not re.fullmatch(r"session \d+", users[-1]["content"]):
            continue
        k = int(users[-1]["content"].split()[-1])
        texts = [str(m["content"]) for m in req.messages if m["role"] == "tool"
                 and not re.match(r"\s+\d+\t", str(m["content"]))]  # the read before the first edit
        if len(texts) >= len(out.get(k, [])):
            out[k] = texts
    return out


@pytest.mark.parametrize("face", ["lsp", "acp"])
async def test_sessions_of_one_server_editing_one_file_lose_nothing(face: str, srv: ScriptedServer,
                                                                    workspace: Path, home: Path) -> None:
    sessions, rounds = (12, 40) if LONG else (6, 15)
    seed = random.SystemRandom().randrange(2 ** 32)
    (workspace / "shared.txt").write_text(shared_file(sessions, rounds))
    srv.set_responder(edit_responder(rounds, seed))
    started = time.monotonic()
    if face == "lsp":
        async with lsp_server(srv, workspace, home, options={"contextWindow": 1_000_000}) as lsp:
            sids = [await lsp.new_session() for _ in range(sessions)]
            answers = await asyncio.gather(*[lsp.result("agent/turn", {"sessionId": sid, "prompt": f"session {k}"},
                                                        300) for k, sid in enumerate(sids)])
            assert all(a["completed"] for a in answers), answers
            assert await lsp.shutdown() == 0
    else:
        async with acp_server(srv, workspace, home, env=run_env(home, srv, AGENTLS_CONTEXT_WINDOW="1000000")) as acp:
            sids = [await acp.new_session(workspace) for _ in range(sessions)]
            answers = await asyncio.gather(*[acp.result("session/prompt", {"sessionId": sid, "prompt": [
                {"type": "text", "text": f"session {k}"}]}, 300) for k, sid in enumerate(sids)])
            assert all(a["stopReason"] == "end_turn" for a in answers), answers
            acp.close_stdin()
            assert await acp.wait(30) == 0
    final = (workspace / "shared.txt").read_text()
    score = judge(session_results(srv.requests), final, rounds)
    print(f"\nconcurrent edits, one {face} server, seed={seed}: {sessions} sessions x {rounds} rounds = "
          f"{sessions * rounds} edits: {score}, {time.monotonic() - started:.1f}s")
    assert score == {"edited": sessions * rounds, "lost": 0, "failed": 0, "lies": 0}, score
    assert final == shared_file(sessions, rounds).replace("=0", "=1")


async def test_processes_editing_one_file_lose_nothing(srv: ScriptedServer, workspace: Path, home: Path) -> None:
    """Several ``agentls run`` at once, each editing its own line of one file: no process overwrites another's
    edits (each write is compared with what was read, under an flock), and every result says the truth."""
    processes, rounds = (6, 30) if LONG else (3, 15)
    seed = random.SystemRandom().randrange(2 ** 32)
    (workspace / "shared.txt").write_text(shared_file(processes, rounds))
    srv.set_responder(edit_responder(rounds, seed))
    started = time.monotonic()
    outcomes = await asyncio.gather(*[run_cli(srv, workspace, home, f"session {k}", "--no-persist", timeout=300)
                                      for k in range(processes)])
    assert all(code == 0 for code, _, _ in outcomes), [err[-500:] for _, _, err in outcomes]
    final = (workspace / "shared.txt").read_text()
    score = judge(session_results(srv.requests), final, rounds)
    conflicts = sum(r.count("applied to its current text") for texts in session_results(srv.requests).values()
                    for r in texts)
    print(f"\nconcurrent edits, {processes} agentls run processes, seed={seed}: {processes * rounds} edits: {score}, "
          f"{conflicts} re-applied after another process wrote first, {time.monotonic() - started:.1f}s")
    assert score == {"edited": processes * rounds, "lost": 0, "failed": 0, "lies": 0}, score


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a write-only file anyway: the test could not fail")
async def test_a_write_only_file_is_still_overwritten_unchecked(workspace: Path) -> None:
    """The write looks at the bytes it replaces (to keep \\r\\n endings): a file this process may write but not
    read is overwritten all the same when nothing needs checking."""
    from agentls.agent import safe_write

    target = workspace / "drop.log"
    target.write_text("old\r\n")
    target.chmod(0o200)
    await safe_write.write_text(workspace.resolve(), target.resolve(), "new\n", expected=safe_write.UNCHECKED)
    target.chmod(0o600)
    assert target.read_bytes() == b"new\n"
