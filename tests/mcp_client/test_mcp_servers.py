"""The MCP manager against real servers: PyPI's mcp-server-time, npm's server-everything and
server-filesystem (stdio, streamable HTTP and SSE), and the lab server's faults."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.agent.mcp.manager import McpManager
from agentls.agent.mcp.spec import parse_servers, with_cwd
from agentls.agent.tools.base import ToolContext, ToolOutput
from agentls.agent.tools.registry import BUILTIN_TOOLS, ToolRegistry
from tests.mcp_client.helpers import alive, descendants, free_port, lab, node_bin, started_pids, time_server


@asynccontextmanager
async def servers(entries: dict[str, Any], root: Path | None = None) -> AsyncIterator[McpManager]:
    specs, problems = parse_servers(entries, "test")
    assert problems == []
    if root is not None:
        specs = [with_cwd(s, str(root)) for s in specs]
    manager = McpManager(specs, ToolRegistry(BUILTIN_TOOLS), roots=[str(root)] if root is not None else [])
    manager.start()
    try:
        await manager.wait_ready()
        yield manager
    finally:
        await manager.aclose()


class Asked:
    def __init__(self, answer: str | None = None) -> None:
        self.questions: list[tuple[Any, ...]] = []
        self.answer = answer

    async def __call__(self, *args: Any) -> str | None:
        self.questions.append(args)
        return self.answer


def ctx(asked: Asked, tmp: Path) -> ToolContext:
    async def nothing(*args: Any) -> None:
        return None

    return ToolContext(host=None, root=tmp, session_id="s", task_id=None,  # type: ignore[arg-type]
                       tool_call_id="c1", settings_terminal_timeout=10, output_limit=10_000, ask_permission=asked,
                       checkpoint=nothing, send_update=nothing, set_plan=lambda e: None)


async def run(manager: McpManager, name: str, args: dict[str, Any], tmp: Path,
              asked: Asked | None = None) -> ToolOutput:
    tool = manager.registry.get(name)
    assert tool is not None, f"{name} not in {manager.registry.names}"
    return await tool.run(ctx(asked or Asked(), tmp), args)


async def test_time_server_from_pypi(tmp_path: Path) -> None:
    async with servers({"time": time_server()}) as manager:
        (status,) = manager.status()
        assert status["state"] == "ready" and status["toolCount"] == 2
        assert set(status["tools"]) == {"mcp__time__get_current_time", "mcp__time__convert_time"}
        assert {"read_file", "terminal"} <= set(manager.registry.names)  # the built-ins stay
        asked = Asked()
        out = await run(manager, "mcp__time__get_current_time", {"timezone": "Europe/Paris"}, tmp_path, asked)
        assert not out.is_error and "Europe/Paris" in out.text
        assert asked.questions == []  # annotated readOnlyHint: no question
        assert manager.registry.get("mcp__time__get_current_time").read_only  # type: ignore[union-attr]
    assert not any(n.startswith("mcp__") for n in manager.registry.names)


async def test_git_server_from_pypi(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    await anyio.run_process([*git, "init", "-q"])
    (repo / "a.txt").write_text("a\n")
    await anyio.run_process([*git, "add", "a.txt"])
    await anyio.run_process([*git, "commit", "-qm", "first commit"])
    (repo / "b.txt").write_text("untracked\n")
    entry = {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(repo)]}
    async with servers({"git": entry}) as manager:
        assert manager.status()[0]["state"] == "ready", manager.status()
        out = await run(manager, "mcp__git__git_status", {"repo_path": str(repo)}, tmp_path)
        assert "b.txt" in out.text
        out = await run(manager, "mcp__git__git_log", {"repo_path": str(repo)}, tmp_path)
        assert "first commit" in out.text


async def test_results_errors_and_permissions(tmp_path: Path) -> None:
    async with servers({"lab": lab()}) as manager:
        asked = Asked()
        out = await run(manager, "mcp__lab__echo", {"text": "hi"}, tmp_path, asked)
        assert out.text == "echo: hi" and not out.is_error
        title, action, raw, key, dangerous, content = asked.questions[0]
        assert raw == {"server": "lab", "tool": "echo", "arguments": {"text": "hi"}}
        assert key == "mcp:lab/echo" and action == "other" and not dangerous and "lab" in title
        assert "Arguments" in content[0]["content"]["text"]
        refused = await run(manager, "mcp__lab__echo", {"text": "hi"}, tmp_path, Asked("error: the user rejected it"))
        assert refused.is_error and refused.text == "error: the user rejected it"

        out = await run(manager, "mcp__lab__fail", {"reason": "no"}, tmp_path)
        assert out.is_error and out.text.startswith("error:")
        out = await run(manager, "mcp__lab__picture", {}, tmp_path)
        assert "here is a pixel" in out.text and "[image: image/png" in out.text
        assert any(c["content"]["type"] == "image" for c in out.content)
        out = await run(manager, "mcp__lab__weather", {"city": "Oslo"}, tmp_path)
        assert out.raw_output == {"city": "Oslo", "temperature": 21} and "21" in out.text
        out = await run(manager, "read_mcp_resource", {"server": "lab", "uri": "lab://notes/today"}, tmp_path)
        assert "buy milk" in out.text and "lab://notes/today" in out.text
        out = await run(manager, "list_mcp_resources", {}, tmp_path)
        assert "lab://notes/today" in out.text


async def test_a_server_that_never_answers_initialize_fails_with_its_stderr(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with servers({"hang": lab("hang", state, startup_timeout_sec=2), "ok": lab()}) as manager:
        hang, ok = manager.status()
        assert hang["state"] == "failed" and "within 2 s" in hang["lastError"]
        assert "I will never answer initialize" in hang["lastError"]
        assert ok["state"] == "ready"  # the others go on
        assert not any(n.startswith("mcp__hang__") for n in manager.registry.names)
        (pid,) = started_pids(state)
        assert not alive(pid)  # stopped, not left behind


async def test_servers_that_cannot_start_are_reported(tmp_path: Path) -> None:
    async with servers({"exit": lab("exit"), "nope": {"command": str(tmp_path / "missing")},
                        "refused": {"type": "http", "url": f"http://127.0.0.1:{free_port()}/mcp",
                                    "startup_timeout_sec": 5}}) as manager:
        by_name = {s["name"]: s for s in manager.status()}
        assert by_name["exit"]["state"] == "failed" and "missing LAB_TOKEN" in by_name["exit"]["lastError"]
        assert "not found" in by_name["nope"]["lastError"]
        assert by_name["refused"]["state"] == "failed" and by_name["refused"]["lastError"]


async def test_a_crash_mid_call_is_a_tool_error_and_the_next_call_restarts_it(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with servers({"lab": lab("ok", state)}) as manager:
        out = await run(manager, "mcp__lab__crash", {}, tmp_path)
        assert out.is_error and "stopped during the call" in out.text
        assert "segfault imminent" in out.text  # the stderr tail explains it
        assert manager.status()[0]["state"] == "crashed"
        assert "mcp__lab__echo" in manager.registry.names  # kept: the next use restarts the server
        out = await run(manager, "mcp__lab__echo", {"text": "again"}, tmp_path)
        assert out.text == "echo: again"
        status = manager.status()[0]
        assert status["state"] == "ready" and status["restarts"] == 1
        # Crashing again right away: the backoff (1 s, then 2 s…) passes before the restart.
        assert (await run(manager, "mcp__lab__crash", {}, tmp_path)).is_error
        assert (await run(manager, "mcp__lab__crash", {}, tmp_path)).is_error
        assert manager.connections[0].crashes == 3  # in a row: the next restart waits 4 s
        out = await run(manager, "mcp__lab__echo", {"text": "third"}, tmp_path)
        assert out.text == "echo: third"
        pids = started_pids(state)
        assert len(pids) == 4
    assert not any(alive(p) for p in pids)


async def test_a_flood_on_stdout_and_stderr_does_not_stop_the_server(tmp_path: Path) -> None:
    async with servers({"flood": lab("flood")}) as manager:
        status = manager.status()[0]
        assert status["state"] == "ready" and status["ignoredLines"] == 20_000
        out = await run(manager, "mcp__flood__noisy", {}, tmp_path)
        assert out.text == "quiet now"
        out = await run(manager, "mcp__flood__echo", {"text": "still here"}, tmp_path)
        assert out.text == "echo: still here"


async def test_timeout_and_cancellation_reach_the_server(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with servers({"lab": lab("ok", state, tool_timeout_sec=0.5)}) as manager:
        out = await run(manager, "mcp__lab__slow", {"seconds": 30}, tmp_path)
        assert out.is_error and "did not answer within 0.5 s" in out.text
        await _until(lambda: (state / "cancelled").exists())  # notifications/cancelled stopped it
        (state / "cancelled").unlink()
        with anyio.move_on_after(0.5):  # an interrupt: the turn's cancel scope
            await run(manager, "mcp__lab__slow", {"seconds": 30}, tmp_path)
        await _until(lambda: (state / "cancelled").exists())
        assert (await run(manager, "mcp__lab__echo", {"text": "ok"}, tmp_path)).text == "echo: ok"


async def _until(predicate: Any, timeout: float = 10.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.02)


async def test_list_changed_refreshes_the_tools(tmp_path: Path) -> None:
    async with servers({"lab": lab()}) as manager:
        version = manager.registry.version
        assert "mcp__lab__extra" not in manager.registry.names
        await run(manager, "mcp__lab__grow", {}, tmp_path)
        await _until(lambda: "mcp__lab__extra" in manager.registry.names)
        assert manager.registry.version > version
        assert (await run(manager, "mcp__lab__extra", {}, tmp_path)).text == "extra tool ran"


async def test_everything_server_over_stdio(tmp_path: Path) -> None:
    exe = node_bin("mcp-server-everything")
    async with servers({"everything": {"command": exe, "args": ["stdio"]}}) as manager:
        status = manager.status()[0]
        assert status["state"] == "ready" and status["toolCount"] >= 10 and status["promptCount"] >= 1
        out = await run(manager, "mcp__everything__echo", {"message": "hello"}, tmp_path)
        assert "hello" in out.text
        out = await run(manager, "mcp__everything__get-tiny-image", {}, tmp_path)
        assert "[image: image/png" in out.text
        out = await run(manager, "mcp__everything__get-structured-content", {"location": "New York"}, tmp_path)
        assert out.raw_output is not None and "temperature" in out.raw_output
        out = await run(manager, "mcp__everything__get-resource-links", {"count": 2}, tmp_path)
        assert "[resource link" in out.text
        out = await run(manager, "mcp__everything__get-sum", {"a": 2, "b": 3}, tmp_path)
        assert "5" in out.text


async def test_filesystem_server_is_confined_to_its_directory(tmp_path: Path) -> None:
    exe = node_bin("mcp-server-filesystem")
    (tmp_path / "notes.txt").write_text("from the filesystem server\n")
    async with servers({"fs": {"command": exe, "args": [str(tmp_path)]}}, tmp_path) as manager:
        assert manager.status()[0]["state"] == "ready"
        out = await run(manager, "mcp__fs__read_text_file", {"path": str(tmp_path / "notes.txt")}, tmp_path)
        assert "from the filesystem server" in out.text
        out = await run(manager, "mcp__fs__read_text_file", {"path": "/etc/passwd"}, tmp_path)
        assert out.is_error
        asked = Asked()
        out = await run(manager, "mcp__fs__write_file", {"path": str(tmp_path / "new.txt"), "content": "x"},
                        tmp_path, asked)
        assert asked.questions and (tmp_path / "new.txt").read_text() == "x"


async def test_filesystem_server_takes_the_workspace_as_its_root(tmp_path: Path) -> None:
    exe = node_bin("mcp-server-filesystem")
    (tmp_path / "notes.txt").write_text("found through roots\n")
    async with servers({"fs": {"command": exe, "args": []}}, tmp_path) as manager:  # no directory given
        assert manager.status()[0]["state"] == "ready", manager.status()
        out = await run(manager, "mcp__fs__list_allowed_directories", {}, tmp_path)
        for _ in range(50):  # the server asks for the roots right after initialize
            if str(tmp_path) in out.text:
                break
            await anyio.sleep(0.1)
            out = await run(manager, "mcp__fs__list_allowed_directories", {}, tmp_path)
        assert str(tmp_path) in out.text
        out = await run(manager, "mcp__fs__read_text_file", {"path": str(tmp_path / "notes.txt")}, tmp_path)
        assert "found through roots" in out.text


@asynccontextmanager
async def http_server(exe: str, transport: str) -> AsyncIterator[str]:
    port = free_port()
    proc = await anyio.open_process([exe, transport], env={**os.environ, "PORT": str(port)},
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        import socket

        with anyio.fail_after(30):
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    await anyio.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        with anyio.fail_after(10):
            await proc.wait()


@pytest.mark.parametrize(("transport", "path", "kind"), [("streamableHttp", "/mcp", "http"), ("sse", "/sse", "sse")])
async def test_everything_server_over_http(tmp_path: Path, transport: str, path: str, kind: str) -> None:
    exe = node_bin("mcp-server-everything")
    async with http_server(exe, transport) as base:
        async with servers({"web": {"type": kind, "url": base + path, "headers": {"X-Test": "1"}}}) as manager:
            status = manager.status()[0]
            assert status["state"] == "ready" and status["transport"] == kind, status
            out = await run(manager, "mcp__web__echo", {"message": "over " + kind}, tmp_path)
            assert f"over {kind}" in out.text


async def test_close_leaves_no_process(tmp_path: Path) -> None:
    state = tmp_path / "state"
    before = descendants(os.getpid())
    async with servers({"a": lab("ok", state), "b": lab("flood", state), "c": time_server()}):
        assert len(descendants(os.getpid()) - before) >= 3
    await asyncio.sleep(0)
    assert descendants(os.getpid()) - before == set()
    assert not any(alive(p) for p in started_pids(state))
