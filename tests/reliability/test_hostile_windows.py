"""Hostile workspace, class 2 (the reader itself): a window of lines streamed from a file of any shape.

``read_file`` reads a file over 1 MB as a window: only the lines asked for (and the start of the next) are
read. These cases pin the window's edges against the whole-file reading it replaces: line endings, a last
line without a newline, a line of megabytes, NUL bytes, an offset past the end or past the scan cap.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

MAX = 2000


async def window(path: Path, offset: int, limit: int, **kw: int) -> object:
    from agentls.agent.fileio import read_window

    return await read_window(path, offset, limit, max_line_chars=MAX, **kw)


@pytest.mark.parametrize("body", [b"a\nb\nc\n", b"a\nb\nc", b"a\r\nb\r\nc\r\n", b"a\n\nc\n"])
async def test_the_window_agrees_with_reading_the_whole_file(body: bytes, tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(body)
    whole = body.decode().splitlines()
    for offset in range(1, 5):
        for limit in range(1, 5):
            w = await window(path, offset, limit)
            assert w.lines == whole[offset - 1: offset - 1 + limit], (body, offset, limit)  # type: ignore[attr-defined]
            assert w.more == (offset - 1 + limit < len(whole)), (body, offset, limit)  # type: ignore[attr-defined]
            if not w.more:  # type: ignore[attr-defined]
                assert w.total == len(whole)  # type: ignore[attr-defined]


async def test_a_line_of_megabytes_is_cut_and_the_rest_still_found(tmp_path: Path) -> None:
    path = tmp_path / "min.js"
    path.write_bytes(b"x" * 5_000_000 + b"\nsecond\nthird\n")
    w = await window(path, 1, 2)
    assert len(w.lines[0]) == MAX and w.lines[1] == "second" and 1 in w.cut and w.more  # type: ignore[attr-defined]


async def test_nul_bytes_at_the_start_mean_binary_and_stop_the_read(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    with path.open("wb") as f:
        f.truncate(50_000_000)  # all zeros, one "line"
    w = await window(path, 1, 3)
    assert w.binary and w.lines == []  # type: ignore[attr-defined]


async def test_the_scan_stops_at_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes(b"line\n" * 1_000_000)
    w = await window(path, 900_000, 3, max_scan=1_000_000)
    assert w.stopped and w.more and w.lines == []  # type: ignore[attr-defined]


async def test_a_fifo_is_not_opened(tmp_path: Path) -> None:
    from agentls.agent.fileio import NotRegularFile

    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotRegularFile, match="FIFO"):
        await window(tmp_path / "pipe", 1, 3)
