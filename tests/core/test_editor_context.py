"""What the editor shows reaches the model: the selection and the active file as a bounded block on the
prompt (agent/editor_context.py), mentioned files read and inlined (agent/prompt_blocks.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.agent.disk_host import DiskHost
from agentls.agent.editor_context import ContextError, render, strip, with_context
from agentls.agent.prompt_blocks import MAX_LINKS, host_reader, inline_links, normalize_prompt
from agentls.agent.replay import replay_updates
from agentls.agent.scripted import ScriptedServer, text

from .conftest import AgentFactory
from .helpers import check, turn_requests, user_texts


def _selection(path: str, text: str, start: tuple[int, int] = (9, 0), end: tuple[int, int] = (11, 0),
               **extra: Any) -> dict[str, Any]:
    return {"selection": {"path": path, "text": text, "languageId": "python",
                          "range": {"start": {"line": start[0], "character": start[1]},
                                    "end": {"line": end[0], "character": end[1]}}, **extra}}


def test_a_selection_and_the_active_file_become_one_block(workspace: Path) -> None:
    block = render({**_selection((workspace / "src/app.py").as_uri(), "def add(a, b):\n    return a + b\n"),
                    "activeFile": {"path": str(workspace / "src/app.py"), "languageId": "python",
                                   "cursor": {"line": 10, "character": 4}}}, workspace)
    assert block == ("<editor_context>\n"
                     "The user's active file in the editor: src/app.py (python), cursor at line 11, column 5.\n"
                     "The user's selection in src/app.py, lines 10-11 (from line 10, column 1 to line 12, column 1):\n"
                     "```python\ndef add(a, b):\n    return a + b\n\n```\n"
                     "</editor_context>")


def test_the_block_is_bounded_and_fenced_safely(workspace: Path, tmp_path: Path) -> None:
    huge = "x = '```'\n" * 10_000
    block = render(_selection(str(tmp_path / "elsewhere.py"), huge, start=(5, 3), end=(2, 0)), workspace)
    assert block is not None
    assert f"in {tmp_path / 'elsewhere.py'}, lines 3-6" in block  # outside the workspace: the absolute path
    assert "\n````python\n" in block and block.endswith("\n````\n</editor_context>")
    assert "more characters (100,000 in all) are not shown" in block
    assert len(block) < 21_000


@pytest.mark.parametrize("context, why", [
    ([], "context must be an object"),
    ({"selection": {"path": "a.py", "text": 3, "range": {}}}, "context.selection.text must be a string"),
    ({"selection": {"path": "", "text": "x", "range": {}}}, "context.selection.path must be a non-empty string"),
    ({"selection": {"path": "a.py", "text": "x"}}, "context.selection.range must be an object"),
    ({"selection": {"path": "a.py", "text": "x", "range": {"start": {"line": -1}, "end": {"line": 0}}}},
     "context.selection.range.start must have non-negative integers"),
    ({"activeFile": "a.py"}, "context.activeFile must be an object"),
    ({"activeFile": {"path": "a.py", "cursor": {"line": True}}}, "context.activeFile.cursor must have"),
])
def test_a_malformed_context_names_the_field(workspace: Path, context: Any, why: str) -> None:
    with pytest.raises(ContextError, match=why):
        render(context, workspace)


def test_nothing_to_say_is_no_block(workspace: Path) -> None:
    assert render(None, workspace) is None and render({}, workspace) is None
    empty = render(_selection("a.py", "  "), workspace)
    assert empty is not None and "The user's selection in a.py is empty (lines 10-11)." in empty


async def test_a_selection_asked_about_reaches_the_model_and_stays_with_the_prompt(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    agent = make_agent()
    block = render(_selection("src/app.py", "def add(a, b):\n    return a + b\n"), workspace)
    srv.push(text("It adds."), text("Renamed."))
    check(await agent.run_conversation(with_context("What does this do?", block)))
    check(await agent.run_conversation("now rename it there"))
    first, second = turn_requests(srv.requests)
    assert user_texts(first)[-1].startswith("What does this do?\n\n<editor_context>\n")
    assert "def add(a, b):\n    return a + b" in user_texts(first)[-1]
    assert any("def add(a, b)" in t for t in user_texts(second))  # the follow-up still knows "there"
    replayed = [u["content"]["text"] for u in replay_updates(agent.messages)
                if u["sessionUpdate"] == "user_message_chunk"]
    assert replayed == ["What does this do?", "now rename it there"]


def test_strip_leaves_other_text_alone() -> None:
    assert strip("plain") == "plain"
    assert strip("ask\n\n<editor_context>\nx\n</editor_context>") == "ask"


async def test_mentioned_files_are_read_through_the_host_and_bounded(workspace: Path, tmp_path: Path) -> None:
    (workspace / "big.txt").write_text("line\n" * 40_000)
    (workspace / "wide.txt").write_text(("x" * 99 + "\n") * 3000)
    (workspace / "blob.bin").write_bytes(b"\x00\x01binary")
    (tmp_path / "secret.txt").write_text("outside")
    read = host_reader(DiskHost(workspace), workspace)

    def link(path: Path | str) -> dict[str, Any]:
        uri = path.as_uri() if isinstance(path, Path) else path
        return {"type": "resource_link", "uri": uri, "name": str(path).rsplit("/", 1)[-1]}

    prompt = [{"type": "text", "text": "compare these"}, link(workspace / "src/util.py"), link(workspace / "big.txt"),
              link(workspace / "wide.txt"), link(workspace / "missing.py"), link(tmp_path / "secret.txt"), link(workspace / "blob.bin"),
              link(workspace / "src"), link("https://example.com/x")]
    content = normalize_prompt(await inline_links(prompt, read))
    assert isinstance(content, str)
    assert f'<resource uri="{(workspace / "src/util.py").as_uri()}">\ndef helper():\n    return 42\n\n</resource>' \
        in content
    assert "line\n[... the file goes on after line 5000; read it for the rest]\n</resource>" in content
    assert "more characters (300,000 in all) are not shown; read the file for the rest]" in content
    assert 'name="missing.py">(not read: there is no such file)</resource_link>' in content
    assert 'name="secret.txt">(not read: the file is outside the session\'s workspace)' in content
    assert "outside\n" not in content
    assert 'name="blob.bin">(not read: it is a binary file)' in content
    assert 'name="src">(not read: ' in content
    assert '(not read: only file links are read, not https links)' in content


async def test_too_many_mentions_are_not_all_read(workspace: Path) -> None:
    calls: list[str] = []

    async def read(uri: str) -> str:
        calls.append(uri)
        return "text"

    prompt = [{"type": "resource_link", "uri": f"file:///f{i}", "name": f"f{i}"} for i in range(MAX_LINKS + 3)]
    out = await inline_links(prompt, read)
    assert len(calls) == MAX_LINKS
    assert [b["type"] for b in out].count("resource") == MAX_LINKS
    assert "more than 20 files were mentioned" in normalize_prompt(out)
