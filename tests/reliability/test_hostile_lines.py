"""A giant single line (no newline at all) read with a limit: the cut is said where it happens, with the
line and the column to read on from, and that column works, on a small file and a streamed large one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.agent.disk_host import DiskHost
from agentls.agent.tools.base import ToolContext, ToolFailure
from agentls.agent.tools.files import READ_FILE


def ctx(root: Path) -> ToolContext:
    async def nothing(*args: Any) -> None:
        return None

    return ToolContext(host=DiskHost(root), root=root, session_id="s", task_id=None, tool_call_id="c",
                       settings_terminal_timeout=10, output_limit=10_000_000, ask_permission=nothing,  # type: ignore[arg-type]
                       checkpoint=nothing, send_update=nothing, set_plan=lambda e: None)


def pattern(size: int) -> bytes:
    return (b"0123456789" * (size // 10 + 1))[:size]


@pytest.mark.parametrize("size", [50_000, 30_000_000], ids=["in-memory", "streamed"])
async def test_a_giant_line_says_where_it_was_cut_and_reads_on(size: int, tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_bytes(pattern(size))
    first = (await READ_FILE.run(ctx(tmp_path), {"path": "one.txt", "limit": 5})).text
    assert first.startswith("     1\t0123456789")
    assert "[line 1 is cut here: " in first and "read on with offset=1 and column=2001]" in first
    if size == 50_000:
        assert "48,000 more characters" in first
    second = (await READ_FILE.run(ctx(tmp_path), {"path": "one.txt", "offset": 1, "column": 2001})).text
    assert second.startswith("     1\t0123456789") and "column=4001]" in second
    shown = second.split("\t", 1)[1].split("... [", 1)[0]
    assert len(shown) == 2000
    near_end = (await READ_FILE.run(ctx(tmp_path), {"path": "one.txt", "column": 49_001})).text
    if size == 50_000:
        assert "[characters 49,001-50,000: the end of line 1]" in near_end
        with pytest.raises(ToolFailure, match="column 50001 is past its end"):
            await READ_FILE.run(ctx(tmp_path), {"path": "one.txt", "column": 50_001})
    with pytest.raises(ToolFailure, match="too far into a line"):
        await READ_FILE.run(ctx(tmp_path), {"path": "one.txt", "column": 4_000_001})


async def test_a_cut_among_short_lines_names_its_own_line(tmp_path: Path) -> None:
    (tmp_path / "mixed.txt").write_text("short\n" + "x" * 5000 + "\nafter\n")
    out = (await READ_FILE.run(ctx(tmp_path), {"path": "mixed.txt"})).text
    assert "[line 2 is cut here: 3,000 more characters; read on with offset=2 and column=2001]" in out
    assert "     3\tafter" in out
