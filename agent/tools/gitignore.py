"""Enough of .gitignore to walk a workspace the way git sees it: per-directory files, negation, anchors, **."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..fileio import NotRegularFile, kind_of, read_small
from ..paths import OutsideWorkspace, resolve_in_workspace

log = logging.getLogger("agentls.tools")
IGNORE_FILE_CAP = 1024 * 1024

ALWAYS_SKIP = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".mypy_cache",
                         ".pytest_cache", ".ruff_cache", ".tox"})


@dataclass(frozen=True)
class Rule:
    base: str  # directory of the .gitignore, relative to the root ("" for the root), posix
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


def _translate(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1:end].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end + 1
        elif c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def parse(text: str, base: str) -> list[Rule]:
    rules = []
    for line in text.splitlines():
        line = line.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        line = line.removeprefix("\\")
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        regex = re.compile(("^" if anchored else "^(?:.*/)?") + body + "$")
        rules.append(Rule(base, regex, negated, dir_only))
    return rules


class Ignore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.rules: list[Rule] = []
        self.skipped: list[str] = []  # ignore files that are not regular files
        for extra in (root / ".git" / "info" / "exclude",):
            self._load(extra, "")

    def _load(self, file: Path, base: str) -> None:
        try:
            resolve_in_workspace(self.root, file)  # a .gitignore symlinked out of the workspace is never read
            text = read_small(file, IGNORE_FILE_CAP).decode("utf-8", "replace")
        except NotRegularFile as exc:  # a FIFO named .gitignore must not hang the walk
            log.warning("not reading %s: %s", file, exc)
            self.skipped.append(str(file))
            return
        except (OSError, OutsideWorkspace):
            return
        self.rules.extend(parse(text, base))

    def enter(self, directory: Path, rel: str) -> None:
        self._load(directory / ".gitignore", rel)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if name in ALWAYS_SKIP:
            return True
        result = False
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.base:
                if not rel.startswith(rule.base + "/"):
                    continue
                sub = rel[len(rule.base) + 1:]
            else:
                sub = rel
            if rule.regex.match(sub):
                result = not rule.negated
        return result


def walk(root: Path, start: Path, max_depth: int) -> Iterator[tuple[str, bool, int]]:
    """``(path relative to root, is_dir, depth)`` below ``start``, git-ignored entries and symlinked dirs skipped."""
    for rel, is_dir, depth, _ in walk_kinds(root, start, max_depth):
        yield rel, is_dir, depth


def walk_kinds(root: Path, start: Path, max_depth: int) -> Iterator[tuple[str, bool, int, str | None]]:
    """Like ``walk``, with what a non-regular, non-directory entry is (``"a FIFO (named pipe)"``...) or None.

    Directory reads are regular-file I/O on the local disk; callers bound the walk and yield to the
    event loop between batches.
    """
    ignore = Ignore(root)
    # Load .gitignore files of the directories above start.
    rel_start = start.relative_to(root).as_posix() if start != root else ""
    parts = rel_start.split("/") if rel_start else []
    ignore.enter(root, "")
    for i in range(len(parts)):
        ignore.enter(root.joinpath(*parts[: i + 1]), "/".join(parts[: i + 1]))
    stack: list[tuple[Path, str, int]] = [(start, rel_start, 0)]
    while stack:
        directory, rel_dir, depth = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                special = None
                if not is_dir and not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                    special = kind_of(entry.stat(follow_symlinks=False).st_mode)
            except OSError:
                continue
            if ignore.ignored(rel, is_dir):
                continue
            yield rel, is_dir, depth + 1, special
            if is_dir and depth + 1 < max_depth:
                subdirs.append((Path(entry.path), rel, depth + 1))
        for sub in reversed(subdirs):
            ignore.enter(sub[0], sub[1])
            stack.append(sub)
