"""Subdirectory hints: ``AGENTS.md`` files near the paths a tool touches (docs/loop.md §6).

The files between a path's directory and the workspace root (root excluded: it is in the system
prompt) are appended to that tool's result, outermost first, each file once per session. Nothing
outside the workspace is ever read: every candidate is re-resolved with ``resolve_in_workspace``,
so ``..``, absolute paths, ``~`` and symlinks (to a file or a directory) that leave the root are
skipped.
"""

from __future__ import annotations

import os

import logging
import re
import shlex
from collections.abc import Iterable
from pathlib import Path


from ..truncate import cap_text
from .files import instructions_header, read_capped
from ..fileio import NotRegularFile
from ..paths import OutsideWorkspace, display, resolve_in_workspace
from ..types import Message, text_of

log = logging.getLogger("agentls.hints")

HINT_FILE = "AGENTS.md"
HINTS_CAP = 32_000
_HEADER_RE = re.compile(r"\[Project instructions from ([^\]\n]+)\]")
_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^[\w.-]+@[\w.-]+:")
_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SHELL_OPS = frozenset({"|", "||", "&", "&&", ";", ";;", "(", ")", "{", "}", "!", "<", ">", ">>", "2>", "&>"})


class HintTracker:
    """Which hint files a session has already shown. One tracker per session."""

    def __init__(self, root: Path, cap_chars: int = HINTS_CAP) -> None:
        self._root = root.resolve()
        self._cap = cap_chars
        self._shown: set[str] = set()  # root-relative posix paths of hint files
        self._claimed: set[str] = set()  # being read right now by a concurrent call
        self.skipped: dict[str, str] = {}  # hint files that are not regular files -> what they are

    @property
    def shown(self) -> frozenset[str]:
        return frozenset(self._shown)

    def seed_from(self, messages: Iterable[Message]) -> None:
        """Mark the hint files present in a resumed transcript's tool results as shown."""
        for message in messages:
            if message.get("role") != "tool":
                continue
            text = text_of(message)
            if "[Project instructions from " not in text:
                continue
            for match in _HEADER_RE.finditer(text):
                self._shown.add(match.group(1).strip())

    async def _chain(self, path: Path) -> list[Path]:
        """The directories from just below the root down to the path's directory."""
        try:
            resolved = resolve_in_workspace(self._root, path)
        except OutsideWorkspace:
            return []
        directory = resolved if os.path.isdir(resolved) else resolved.parent
        chain: list[Path] = []
        while directory != self._root and self._root in directory.parents:
            chain.append(directory)
            directory = directory.parent
        chain.reverse()
        return chain

    async def _read_hint(self, candidate: Path) -> str | None:
        try:
            resolved = resolve_in_workspace(self._root, candidate)
        except OutsideWorkspace:
            log.warning("not reading %s: it resolves outside the workspace", candidate)
            return None
        try:
            text, _ = await read_capped(resolved, self._cap)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except NotRegularFile as exc:  # a FIFO would block the turn, a device never ends
            log.warning("not reading the hint file %s", exc)
            self.skipped[display(self._root, resolved)] = exc.kind
            return None
        except OSError as exc:
            log.warning("cannot read %s: %s", candidate, exc)
            return None
        return text.strip()

    async def hints_for(self, paths: Iterable[Path]) -> str | None:
        """The not-yet-shown hint files for ``paths`` as one block to append to a tool result."""
        blocks: list[str] = []
        for path in paths:
            for directory in await self._chain(path):
                candidate = directory / HINT_FILE
                key = display(self._root, candidate)
                if key in self._shown or key in self._claimed or key in self.skipped:
                    continue
                self._claimed.add(key)  # a concurrent call must not show it too
                try:
                    text = await self._read_hint(candidate)
                finally:
                    self._claimed.discard(key)
                if text is None:
                    continue
                self._shown.add(key)
                if text:
                    blocks.append(f"\n\n{instructions_header(key)}\n{text}")
        if not blocks:
            return None
        joined = "".join(blocks)
        capped, cut = cap_text(joined, self._cap)
        if cut:
            log.warning("subdirectory hints cut: %d of %d characters removed to fit the %d-character cap",
                        cut, len(joined), self._cap)
        return capped


def _split_command(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=True)
    except ValueError:  # unbalanced quotes: fall back to words with their quotes stripped
        return [word.strip("'\"") for word in command.split()]


def _candidate(token: str) -> str | None:
    if not token or token in _SHELL_OPS or token.startswith("-") or _URL_RE.search(token):
        return None
    if _ASSIGN_RE.match(token):
        token = token.split("=", 1)[1]
    token = token.lstrip("<>&|;(").rstrip("|;&)")
    if token[:1].isdigit() and token[1:2] == ">":
        token = token[2:]
    if not token or token.startswith(("-", "~")) or "$(" in token or "`" in token:
        return None
    return token


def paths_in_command(command: str, cwd: Path, root: Path) -> list[Path]:
    """The workspace paths a shell command names (resolved, existing or path-shaped), plus ``cwd``.

    Options, URL-like tokens (``scheme://``, ``git@host:``) and anything outside the root are
    ignored; bad quoting is tolerated. ``cwd`` itself is dropped when it is outside the root.
    """
    out: list[Path] = []
    seen: set[Path] = set()

    def add(p: Path) -> None:
        if p not in seen:
            seen.add(p)
            out.append(p)

    try:
        base = resolve_in_workspace(root, cwd)
    except OutsideWorkspace:
        return []
    add(base)
    for token in _split_command(command):
        raw = _candidate(token)
        if raw is None:
            continue
        candidate = Path(raw) if Path(raw).is_absolute() else base / raw
        try:
            resolved = resolve_in_workspace(root, candidate)
        except OutsideWorkspace:
            continue
        if "/" in raw or raw.startswith(".") or resolved.exists():
            add(resolved)
    return out

