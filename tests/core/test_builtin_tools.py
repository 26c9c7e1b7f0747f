"""docs/loop.md §9: each built-in tool through a real turn, and workspace confinement."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from agentls.agent.host import WriteResult
from agentls.agent.disk_host import DiskHost
from agentls.agent.scripted import ScriptedServer, ToolCallSpec, call, text, tools

from .conftest import AgentFactory
from .helpers import UNSANDBOXED, Updates, check, pid_alive, tool_msgs, wait_until

NUMBERED = re.compile(r"^\s*(\d+)[\t:|→ ]+(.*)$")
SECRET = "TOP-SECRET-TOKEN-1234"


async def _run(make_agent: AgentFactory, srv: ScriptedServer, *calls: ToolCallSpec, approval: str = "yolo",
               **kw: object) -> list[str]:
    srv.push(tools(*calls), text("ok"))
    result = check(await make_agent(approval=approval, **kw).run_conversation("use the tools"))
    return [str(m["content"]) for m in tool_msgs(result)]


def _numbered(output: str) -> list[tuple[int, str]]:
    return [(int(m.group(1)), m.group(2)) for line in output.splitlines() if (m := NUMBERED.match(line))]


async def test_read_file_numbers_lines(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    (out,) = await _run(make_agent, srv, call("read_file", {"path": "notes.txt"}))
    assert _numbered(out) == [(i, f"line {i}") for i in range(1, 11)]


async def test_read_file_offset_and_limit(make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    window, tail = await _run(make_agent, srv, call("read_file", {"path": "notes.txt", "offset": 3, "limit": 2}),
                              call("read_file", {"path": str(workspace / "notes.txt"), "offset": 9}))
    assert _numbered(window) == [(3, "line 3"), (4, "line 4")]
    assert _numbered(tail) == [(9, "line 9"), (10, "line 10")]


async def test_read_file_missing_is_an_error(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    (out,) = await _run(make_agent, srv, call("read_file", {"path": "nope.txt"}))
    assert out.startswith("error") and "nope.txt" in out


async def test_write_file_creates_and_overwrites(make_agent: AgentFactory, srv: ScriptedServer,
                                                 workspace: Path) -> None:
    outs = await _run(make_agent, srv, call("write_file", {"path": "deep/new/file.txt", "content": "fresh\nno nl"}),
                      call("read_file", {"path": "README.md"}),
                      call("write_file", {"path": "README.md", "content": "replaced\n"}), approval="auto-edit")
    assert not any(o.startswith("error") for o in outs)
    assert (workspace / "deep/new/file.txt").read_text() == "fresh\nno nl"
    assert (workspace / "README.md").read_text() == "replaced\n"


async def test_edit_file_exact_and_replace_all(make_agent: AgentFactory, srv: ScriptedServer,
                                               workspace: Path) -> None:
    (workspace / "dup.py").write_text("x = 1\nprint(x)\nx = 1\n")
    outs = await _run(make_agent, srv, call("read_file", {"path": "src/app.py"}), call("read_file", {"path": "dup.py"}),
                      call("edit_file", {"path": "src/app.py", "old_string": 'return f"hello {name}"',
                                         "new_string": 'return f"hi {name}"'}),
                      call("edit_file", {"path": "dup.py", "old_string": "x = 1", "new_string": "x = 2",
                                         "replace_all": True}))
    assert not any(o.startswith("error") for o in outs)
    assert 'return f"hi {name}"' in (workspace / "src/app.py").read_text()
    assert (workspace / "dup.py").read_text() == "x = 2\nprint(x)\nx = 2\n"


async def test_edit_file_missing_shows_the_nearest_match(make_agent: AgentFactory, srv: ScriptedServer,
                                                         workspace: Path) -> None:
    before = (workspace / "src/app.py").read_text()
    _, out = await _run(make_agent, srv, call("read_file", {"path": "src/app.py"}),
                        call("edit_file", {"path": "src/app.py", "old_string": "def greet(nme):",
                                           "new_string": "def greet(who):"}))
    assert out.startswith("error: 'old_string' was not found") and "def greet(name):" in out
    assert (workspace / "src/app.py").read_text() == before


async def test_edit_file_ambiguous_shows_the_matches(make_agent: AgentFactory, srv: ScriptedServer,
                                                     workspace: Path) -> None:
    """Demanding reading of "shows the nearest match" for an ambiguous ``old_string``: the error names the
    lines where it occurs, so the model can widen it."""
    body = "a = 0\nb = 0\nx = 1\nc = 0\nd = 0\ne = 0\nx = 1\n"
    (workspace / "dup.py").write_text(body)
    _, out = await _run(make_agent, srv, call("read_file", {"path": "dup.py"}),
                        call("edit_file", {"path": "dup.py", "old_string": "x = 1", "new_string": "x = 2"}))
    assert out.startswith("error: 'old_string' appears 2 times")
    assert re.search(r"\b3\b", out) and re.search(r"\b7\b", out), out
    assert (workspace / "dup.py").read_text() == body


async def test_list_dir_respects_gitignore(make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    (workspace / "src" / ".gitignore").write_text("secret.py\n")
    (workspace / "src" / "secret.py").write_text("hidden\n")
    (workspace / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (workspace / "keep.log").write_text("kept\n")
    (listing,) = await _run(make_agent, srv, call("list_dir", {}))
    for shown in ("README.md", "notes.txt", "src", "app.py", "util.py", "keep.log"):
        assert shown in listing, listing
    for hidden in ("build", "out.txt", "debug.log", "secret.py"):
        assert hidden not in listing, listing


async def test_list_dir_depth(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    shallow, sub = await _run(make_agent, srv, call("list_dir", {"depth": 1}), call("list_dir", {"path": "src"}))
    assert "src" in shallow and "README.md" in shallow and "app.py" not in shallow
    assert "app.py" in sub and "util.py" in sub and "README.md" not in sub


class EditorHost(DiskHost):
    """An editor: an unsaved buffer for README.md, and a user who rejects edits to notes.txt."""

    async def read_text(self, path: Path) -> str:
        if path.name == "README.md":
            return "UNSAVED BUFFER TEXT\n"
        return await super().read_text(path)

    async def write_text(self, path: Path, content: str, *, previous: str | None) -> WriteResult:
        if path.name == "notes.txt":
            return WriteResult(False, "the user rejected the edit in the diff view")
        return await super().write_text(path, content, previous=previous)


async def test_file_tools_go_through_the_editor(make_agent: AgentFactory, srv: ScriptedServer, workspace: Path,
                                                updates: Updates) -> None:
    read, _, rejected = await _run(make_agent, srv, call("read_file", {"path": "README.md"}),
                                   call("read_file", {"path": "notes.txt"}),
                                   call("write_file", {"path": "notes.txt", "content": "new\n" * 10}),
                                host=EditorHost(workspace, updates))
    assert "UNSAVED BUFFER TEXT" in read and "Demo project" not in read
    assert rejected.startswith("error") or "not applied" in rejected
    assert "rejected" in rejected
    assert (workspace / "notes.txt").read_text().startswith("line 1")


async def test_search_files_regex_glob_and_cap(make_agent: AgentFactory, srv: ScriptedServer,
                                               workspace: Path) -> None:
    (workspace / "many.txt").write_text("".join(f"match number {i}\n" for i in range(2000)))
    regex, glob, capped = await _run(
        make_agent, srv, call("search_files", {"pattern": r"def \w+\("}),
        call("search_files", {"pattern": "line [0-9]+", "glob": "*.txt"}),
        call("search_files", {"pattern": "match number"}))
    assert "src/app.py:4:def greet(name):" in regex and "src/util.py:1:def helper():" in regex
    assert "notes.txt:" not in regex
    assert "notes.txt:3:line 3" in glob and "app.py" not in glob
    hits = [line for line in capped.splitlines() if line.startswith("many.txt:")]
    assert 0 < len(hits) < 2000 and len(capped) < 60_000
    assert "many.txt:1:match number 0" in capped


async def test_terminal_exit_code_output_and_cwd(make_agent: AgentFactory, srv: ScriptedServer) -> None:
    failing, cwd = await _run(make_agent, srv, call("terminal", {"command": "echo hello there; exit 3"}),
                              call("terminal", {"command": "pwd", "cwd": "src"}))
    assert "hello there" in failing and re.search(r"\b3\b", failing)
    assert cwd.rstrip().endswith("/src") or "/src\n" in cwd


async def test_terminal_timeout_kills_the_command(make_agent: AgentFactory, srv: ScriptedServer,
                                                  workspace: Path) -> None:
    start = time.monotonic()
    (out,) = await _run(make_agent, srv, call("terminal", {"command": "echo $$ > pid.txt; exec sleep 30",
                                                          "timeout": 1}),
                        sandbox=UNSANDBOXED)  # $$ is the host's pid only outside the sandbox's PID namespace
    assert time.monotonic() - start < 4
    assert "timed out" in out.lower()
    await wait_until(lambda: not pid_alive(int((workspace / "pid.txt").read_text())), timeout=2)


async def test_todo_emits_a_plan_update(make_agent: AgentFactory, srv: ScriptedServer, updates: Updates) -> None:
    items = [{"content": "read the code", "status": "completed"}, {"content": "fix the bug", "status": "in_progress"},
             {"content": "run the tests", "status": "pending"}]
    (out,) = await _run(make_agent, srv, call("todo", {"items": items}))
    (plan,) = updates.of("plan")
    assert [(e["content"], e["status"]) for e in plan["entries"]] == [(i["content"], i["status"]) for i in items]
    assert all(i["content"] in out for i in items)


@pytest.fixture
def outside(tmp_path: Path, workspace: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text(f"{SECRET}\n")
    (workspace / "link").symlink_to(out, target_is_directory=True)
    (workspace / "linkfile").symlink_to(out / "secret.txt")
    return out


FILE_ESCAPES = ["../outside/secret.txt", "{outside}/secret.txt", "link/secret.txt", "linkfile", "~/secret.txt",
                "src/../../outside/secret.txt", "./link/../link/secret.txt", "link/new.txt", "../outside/new.txt"]
DIR_ESCAPES = ["..", "{outside}", "link", "~", "src/../..", "link/."]


def _unchanged(outside: Path, srv: ScriptedServer) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == f"{SECRET}\n"
    assert all(SECRET.encode() not in r.raw for r in srv.requests), "outside content reached the model"


@pytest.mark.parametrize("raw", FILE_ESCAPES)
async def test_file_paths_outside_the_workspace_are_refused(make_agent: AgentFactory, srv: ScriptedServer,
                                                            outside: Path, raw: str) -> None:
    raw = raw.replace("{outside}", str(outside))
    outs = await _run(make_agent, srv, call("read_file", {"path": raw}),
                      call("write_file", {"path": raw, "content": "PWNED"}),
                      call("edit_file", {"path": raw, "old_string": "TOP", "new_string": "PWNED"}))
    assert all(out.startswith("error") for out in outs), outs
    _unchanged(outside, srv)


@pytest.mark.parametrize("raw", DIR_ESCAPES)
async def test_directory_paths_outside_the_workspace_are_refused(make_agent: AgentFactory, srv: ScriptedServer,
                                                                 outside: Path, raw: str) -> None:
    raw = raw.replace("{outside}", str(outside))
    outs = await _run(make_agent, srv, call("list_dir", {"path": raw}),
                      call("search_files", {"pattern": "SECRET", "path": raw}),
                      call("terminal", {"command": "cat secret.txt > stolen.txt; ls", "cwd": raw}))
    assert all(out.startswith("error") for out in outs), outs
    _unchanged(outside, srv)


async def test_workspace_wide_tools_never_follow_links_out(make_agent: AgentFactory, srv: ScriptedServer,
                                                           outside: Path) -> None:
    """Searching or listing the whole workspace must not read through a symlink that points outside."""
    outs = await _run(make_agent, srv, call("search_files", {"pattern": "SECRET"}),
                      call("list_dir", {"depth": 3}), call("terminal", {"command": "true"}))
    assert all(SECRET not in o for o in outs)
    assert "secret.txt" not in outs[1], outs[1]
    assert all(SECRET.encode() not in r.raw for r in srv.requests)


async def test_absolute_paths_inside_the_workspace_work(make_agent: AgentFactory, srv: ScriptedServer,
                                                        workspace: Path) -> None:
    read, wrote = await _run(make_agent, srv, call("read_file", {"path": str(workspace / "README.md")}),
                             call("write_file", {"path": str(workspace / "abs.txt"), "content": "abs"}))
    assert "Demo project" in read and not wrote.startswith("error")
    assert (workspace / "abs.txt").read_text() == "abs"
