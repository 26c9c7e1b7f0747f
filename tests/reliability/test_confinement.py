"""Suite 5: nothing outside the workspace is read or written, through the LSP face.

Canary files with unique content live next to the workspace (and in a private HOME). Every tool and
the hint loader get ``..``, absolute paths outside the root, symlinks pointing out, ``~``, ``/proc`` and
very long paths. Afterwards the canary content and the canary file names must appear in no request the
scripted provider received and in no byte the server wrote; nothing outside may have changed; and an
inotify watch on the outside directories must have seen no file opened, read or written there.

The ``terminal`` tool's *command* is a shell command line and is not sandboxed (its ``cwd`` is
confined, and the approval policy governs the command); its path arguments only feed the hint loader.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import struct
import uuid
from pathlib import Path
from typing import Any

from agentls.agent.scripted import ScriptedServer, call, text, tools

from .wire import LspProc, marked_pids, server_env

IN_EVENTS = {0x1: "access", 0x2: "modify", 0x4: "attrib", 0x20: "open", 0x40: "moved_from", 0x80: "moved_to",
             0x100: "create", 0x200: "delete"}


class Inotify:
    """Records opens, reads and writes under some directories (Linux inotify through libc)."""

    def __init__(self, dirs: list[Path]) -> None:
        self.libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0, os.strerror(ctypes.get_errno())
        self.names: dict[int, Path] = {}
        for d in dirs:
            wd = self.libc.inotify_add_watch(self.fd, str(d).encode(), sum(IN_EVENTS))
            assert wd >= 0, os.strerror(ctypes.get_errno())
            self.names[wd] = d

    def events(self) -> list[str]:
        out: list[str] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            i = 0
            while i < len(data):
                wd, mask, _, size = struct.unpack_from("iIII", data, i)
                name = data[i + 16: i + 16 + size].rstrip(b"\0").decode()
                kinds = [k for bit, k in IN_EVENTS.items() if mask & bit]
                out.append(f"{'/'.join(kinds)} {self.names.get(wd)}/{name}")
                i += 16 + size

    def close(self) -> None:
        os.close(self.fd)


def snapshot(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        out[key] = "link" if path.is_symlink() else "dir" if path.is_dir() else hashlib.sha256(
            path.read_bytes()).hexdigest()
    return out


def lay_out(tmp: Path, gitignore_out: bool = False) -> tuple[Path, Path, str, str]:
    canary, name = f"CANARY-{uuid.uuid4().hex}", f"canaryname-{uuid.uuid4().hex[:12]}"
    ws, out = tmp / "ws", tmp / "outside"
    for d in (ws / "sub", ws / "deep", out / "home" / ".ssh", out / "dir"):
        d.mkdir(parents=True)
    for f in ("canary.txt", f"{name}.txt", "AGENTS.md", "root-context.md", "gitignore", "dir/canary.txt",
              "home/canary.txt", "home/.ssh/id_rsa", "home/AGENTS.md"):
        (out / f).write_text(f"{canary} in {f}\n")
    (ws / "notes.md").write_text("# notes\n")
    (ws / "sub" / "inner.txt").write_text("inner\n")
    (ws / "deep" / "file.txt").write_text("deep file\n")
    (ws / "deep" / "AGENTS.md").write_text("LEGIT-HINT: tests live in deep/tests\n")
    (ws / "AGENTS.md").symlink_to(out / "root-context.md")  # root context file pointing out
    (ws / "sub" / "AGENTS.md").symlink_to(out / "AGENTS.md")  # hint file pointing out
    if gitignore_out:
        (ws / ".gitignore").symlink_to(out / "gitignore")
    (ws / "link_dir").symlink_to(out)
    (ws / "link_file").symlink_to(out / "canary.txt")
    (ws / "sub" / "up").symlink_to("../..")
    return ws, out, canary, name


def evil_paths(out: Path) -> list[str]:
    return ["../outside/canary.txt", str(out / "canary.txt"), "link_dir/canary.txt", "link_file", "link_dir",
            "~/canary.txt", "~", "~root", "/proc/self/environ", "/proc/self/cwd/../outside/canary.txt",
            f"/proc/self/root{out}/canary.txt", "sub/../../outside/canary.txt", "sub/up/outside/canary.txt",
            "..", "/", str(out), f"file://{out}/canary.txt", "a/" * 2100 + "x", "b" * 5000, "/etc/passwd"]


def points_out(ws: Path, path: str) -> bool:
    """Whether ``path`` names something outside ``ws`` (``file://x`` is a relative name on POSIX)."""
    if path.startswith("~") or path.startswith("/"):
        return True
    try:
        return not (ws / path).resolve().is_relative_to(ws.resolve())
    except OSError:
        return False


def calls_for(path: str) -> list[Any]:
    return [call("read_file", {"path": path}), call("write_file", {"path": path, "content": "WRITTEN\n"}),
            call("edit_file", {"path": path, "old_string": " in ", "new_string": " pwned in "}),
            call("list_dir", {"path": path}), call("search_files", {"pattern": "CANARY", "path": path}),
            call("terminal", {"command": "true", "cwd": path}), call("terminal", {"command": f"true {path}"})]


async def run_turn(srv: ScriptedServer, tmp_path: Path, ws: Path, out: Path) -> tuple[LspProc, list[str]]:
    """One turn of the pushed script through a real ``agentls lsp``; the inotify events outside."""
    home = out / "home"
    env = server_env(home, AGENTLS_DATA_DIR=str(tmp_path / "data"), AGENTLS_CONFIG=str(tmp_path / "none.toml"))
    lsp = await LspProc.start(env, ws, stderr=tmp_path / "stderr.log")
    watch = None
    try:
        await lsp.initialize(ws, {"model": "scripted", "baseUrl": srv.openai_url, "approval": "yolo",
                                  "titles": "prompt", "maxRetries": 0})
        sid = await lsp.new_session()
        watch = Inotify([out, out / "dir", home, home / ".ssh"])
        result = await lsp.result("agent/turn", {"sessionId": sid, "prompt": "try everything"}, 120)
        opened = watch.events()
        assert result["completed"], result
        assert await lsp.shutdown() == 0
        assert not marked_pids(lsp.mark)
    finally:
        if watch is not None:
            watch.close()
        await lsp.aclose()
    return lsp, opened


async def test_no_tool_and_no_hint_reaches_outside_the_workspace(srv: ScriptedServer, tmp_path: Path) -> None:
    ws, out, canary, name = lay_out(tmp_path)
    paths = evil_paths(out)
    rounds = [tools(*calls_for(p)) for p in paths]
    controls = tools(call("read_file", {"path": "deep/file.txt"}), call("read_file", {"path": "sub/inner.txt"}),
                     call("search_files", {"pattern": "CANARY"}), call("list_dir", {"depth": 6}),
                     call("terminal", {"command": "true sub/inner.txt ../outside/AGENTS.md"}))
    srv.push(*rounds, controls, text("done"))
    before = snapshot(out)
    lsp, opened = await run_turn(srv, tmp_path, ws, out)

    wire = b"\n".join(r.raw for r in srv.requests)
    assert all(r.rejected is None for r in srv.requests)
    for needle in (canary, name):
        assert needle.encode() not in wire, f"{needle} reached the model"
        assert needle.encode() not in bytes(lsp.sent), f"{needle} reached the editor"
    assert snapshot(out) == before, "a file outside the workspace changed"
    assert opened == [], f"files outside the workspace were touched: {opened}"
    results = [m for m in srv.requests[-1].messages if m["role"] == "tool"]
    per_path = results[: len(paths) * 7]
    succeeded = [(paths[i // 7][:60], str(m["content"])[:100]) for i, m in enumerate(per_path)
                 if points_out(ws, paths[i // 7]) and not str(m["content"]).startswith("error")
                 and not str(m["content"]).startswith("$ true ")]  # `true <path>` runs; only its hints matter
    assert succeeded == [], f"calls on outside paths did not fail: {succeeded}"
    assert "LEGIT-HINT" in str(results[-5]["content"]), "the hint loader did not work inside the workspace"
    print(f"\nconfinement: {len(paths)} hostile paths x 7 tool calls + hint and root-context files symlinked out: "
          f"0 bytes of canary content in {len(srv.requests)} provider requests and {len(lsp.sent):,} bytes of "
          f"frames, 0 files changed or opened outside")


async def test_a_gitignore_symlinked_out_of_the_workspace_is_not_read(srv: ScriptedServer, tmp_path: Path) -> None:
    """``list_dir`` and ``search_files`` load ``.gitignore`` files; one that links out must not be opened."""
    ws, out, canary, _ = lay_out(tmp_path, gitignore_out=True)
    srv.push(tools(call("list_dir", {}), call("search_files", {"pattern": "notes"})), text("done"))
    lsp, opened = await run_turn(srv, tmp_path, ws, out)
    assert canary.encode() not in b"\n".join(r.raw for r in srv.requests) + bytes(lsp.sent)
    assert opened == [], f"files outside the workspace were opened: {opened}"
