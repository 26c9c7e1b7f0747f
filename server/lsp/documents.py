"""The editor's buffers as the agent sees them, and minimal ``TextEdit``s in UTF-16 positions.

pygls keeps the synced copy of each open document (incremental ``didChange``). This module indexes
those documents by resolved path and remembers what the server itself wrote through
``workspace/applyEdit``, so a read right after an edit returns the new text even before the editor's
``didChange`` (or, for files the editor has not opened, its ``didOpen``) arrives.
"""

from __future__ import annotations

import asyncio
import bisect
import difflib
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.workspace import Workspace

from .params import uri_to_path

log = logging.getLogger("agentls.lsp.documents")

_EOL = re.compile(r"\r\n|\r|\n")  # the only line ends LSP knows


@dataclass(frozen=True)
class Buffer:
    uri: str
    version: int | None
    text: str


@dataclass(frozen=True)
class Written:
    """Text the server sent to the editor, pending the editor's own notification."""

    content: str
    version: int | None  # the buffer version the edit was made against; None: the file was not open
    mtime: float | None  # the file's mtime then (a newer one on disk wins)


def path_of(uri: str) -> Path | None:
    try:
        return uri_to_path(uri).resolve()
    except (ValueError, OSError):
        return None


def file_uri(path: Path) -> str:
    return path.as_uri()


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


class Documents:
    def __init__(self, workspace: Callable[[], Workspace]) -> None:
        self._workspace = workspace
        self._uris: dict[Path, str] = {}
        self._written: dict[Path, Written] = {}
        self._waiters: dict[Path, list[asyncio.Future[None]]] = {}

    # ----------------------------------------------------------- notifications from the editor
    def opened(self, uri: str) -> None:
        path = path_of(uri)
        if path is not None:
            self._uris[path] = uri
            self._written.pop(path, None)
            self._wake(path)

    def changed(self, uri: str) -> None:
        path = path_of(uri)
        if path is not None:
            self._written.pop(path, None)
            self._wake(path)

    def closed(self, uri: str) -> None:
        path = path_of(uri)
        if path is not None and self._uris.get(path) == uri:
            del self._uris[path]
            self._written.pop(path, None)
            self._wake(path)

    def _wake(self, path: Path) -> None:
        for future in self._waiters.pop(path, []):
            if not future.done():
                future.set_result(None)

    def unsynced(self, path: Path) -> bool:
        """The server wrote to this open document and the editor has not reported it back yet."""
        written = self._written.get(path)
        buf = self.buffer(path)
        return written is not None and buf is not None and buf.version == written.version

    async def wait_synced(self, path: Path, timeout: float) -> bool:
        """Wait (up to ``timeout``) for the editor to report the server's last edit of ``path``."""
        if not self.unsynced(path):
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(path, []).append(future)
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            pass
        return not self.unsynced(path)

    # ----------------------------------------------------------- reads
    def buffer(self, path: Path) -> Buffer | None:
        """The open document for ``path`` (as the editor last synced it), or None."""
        uri = self._uris.get(path)
        if uri is None:
            return None
        doc = self._workspace().text_documents.get(uri)
        if doc is None:
            doc = next((d for d in self._workspace().text_documents.values() if path_of(d.uri) == path), None)
            if doc is None:
                self._uris.pop(path, None)
                return None
        return Buffer(doc.uri, doc.version, doc.source)

    def current(self, path: Path) -> str | None:
        """What the server knows without the disk: its own pending write, else the open buffer."""
        buf = self.buffer(path)
        written = self._written.get(path)
        if written is not None:
            stale = (buf is not None and buf.version != written.version) or \
                (buf is None and written.version is None and _mtime(path) != written.mtime)
            if not stale:
                return written.content
            self._written.pop(path, None)
        return buf.text if buf is not None else None

    # ----------------------------------------------------------- writes
    def wrote(self, path: Path, content: str, version: int | None) -> None:
        self._written[path] = Written(content, version, _mtime(path))

    def forget(self, path: Path) -> None:
        self._written.pop(path, None)


# --------------------------------------------------------------- minimal edits
def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class LineIndex:
    """Offsets (str indices) to LSP positions, UTF-16 columns."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _EOL.finditer(text)]

    def position(self, offset: int) -> types.Position:
        line = bisect.bisect_right(self.starts, offset) - 1
        return types.Position(line=line, character=_utf16_len(self.text[self.starts[line]:offset]))

    def end(self) -> types.Position:
        return self.position(len(self.text))


def split_lines(text: str) -> list[str]:
    out: list[str] = []
    start = 0
    for m in _EOL.finditer(text):
        out.append(text[start:m.end()])
        start = m.end()
    if start < len(text):
        out.append(text[start:])
    return out


def _trim(old: str, new: str, oa: int, ob: int, na: int, nb: int) -> tuple[int, int, int, int]:
    """Shrink a replaced region to its changed core, never splitting a CRLF."""
    while oa < ob and na < nb and old[oa] == new[na]:
        oa, na = oa + 1, na + 1
    while oa < ob and na < nb and old[ob - 1] == new[nb - 1]:
        ob, nb = ob - 1, nb - 1
    if 0 < oa < len(old) and old[oa - 1] == "\r" and old[oa] == "\n":
        oa, na = oa - 1, na - 1
    if 0 < ob < len(old) and old[ob - 1] == "\r" and old[ob] == "\n":
        ob, nb = ob + 1, nb + 1
    return oa, ob, na, nb


def _common_ends(old: str, new: str) -> tuple[int, int]:
    """Lengths of the common prefix and of the common suffix (not overlapping it)."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return prefix, suffix


def text_edits(old: str, new: str) -> list[types.TextEdit]:
    """Non-overlapping edits turning ``old`` into ``new`` that touch only the changed regions.

    The common head and tail are cut first (one change costs no more than its own size), then the
    middle is diffed line by line and each replaced block trimmed to its changed characters.
    """
    if old == new:
        return []
    prefix, suffix = _common_ends(old, new)
    a, b = split_lines(old[prefix:len(old) - suffix]), split_lines(new[prefix:len(new) - suffix])
    a_off = [prefix]
    for line in a:
        a_off.append(a_off[-1] + len(line))
    b_off = [prefix]
    for line in b:
        b_off.append(b_off[-1] + len(line))
    index = LineIndex(old)
    edits: list[types.TextEdit] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=len(a) > 2000)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        oa, ob, na, nb = _trim(old, new, a_off[i1], a_off[i2], b_off[j1], b_off[j2])
        if oa == ob and na == nb:
            continue
        edits.append(types.TextEdit(range=types.Range(start=index.position(oa), end=index.position(ob)),
                                    new_text=new[na:nb]))
    return edits
