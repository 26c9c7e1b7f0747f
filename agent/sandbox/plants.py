"""What a sandboxed command could still leave for git to run later, looked at before and after each command
and undone, with a note for the model and the user (docs/sandbox.md).

Under bubblewrap the git directory's hooks and config cannot change (``protect.py``), but a file git
would follow can still be created where none was: ``commondir`` or ``config.worktree`` (the first points
git's config and hooks at another folder). Under Landlock, which cannot make a folder inside the
workspace read-only, the hooks and the config themselves can change, and ``.git`` can be renamed and
rebuilt: so the hooks and the config are remembered before the command and put back after it. A
repository the command created itself (``git init``) keeps what git made, never a hook it did not.

This runs outside the sandbox, on paths the command could shape: it never follows a symlink below the
workspace. Every folder is opened with ``O_NOFOLLOW`` and worked on through its descriptor, so a
``.git/hooks`` that became a link to ``~/.ssh`` is moved aside as a link, never listed, emptied or written
through. What is taken away is moved aside (``NAME.agentls-removed``) unless the command created it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# The workspace's files that make agentls itself start programs in a later session, when the user trusts the
# workspace's config (hooks, MCP servers): a command may not create or change them; the edit tools ask.
WORKSPACE_CONFIG = (".agentls.toml", ".mcp.json")
CLAUDE = ".claude"
CLAUDE_CONFIG = "settings.json"
# Files git follows when they exist, that an ordinary repository has not.
PLANTABLE = ("commondir", "config.worktree")
MAX_REMEMBERED = 1 << 20  # bytes per hook file or config kept to put back
SAMPLE = ".sample"
ASIDE = ".agentls-removed"
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Settings under which git runs a program (in a repository the command created, they are reported). A key
# may follow its section header on the same line (``[core] fsmonitor = x``).
RUNS = re.compile(r"(?:^|\])\s*(hookspath|fsmonitor|sshcommand|editor|pager|askpass|textconv|command|driver|clean|"
                  r"smudge|process|helper|program|path)\s*=|(?:^|\])\s*[\w-]+\s*=\s*\"?!", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Entry:
    """One path as ``lstat`` saw it, with what it takes to put it back: a small regular file's bytes, a
    symlink's target. ``ident`` (type and mode, inode, size, mtime) tells a change of anything else."""

    ident: tuple[int, int, int, int]
    data: bytes | None = None
    link: str | None = None

    @property
    def kind(self) -> str:
        mode = self.ident[0]
        return "link" if stat.S_ISLNK(mode) else "dir" if stat.S_ISDIR(mode) else "file"

    def same(self, other: Entry) -> bool:
        if self.data is not None and other.data is not None:
            return self.data == other.data and self.ident[0] == other.ident[0]
        if self.link is not None and other.link is not None:
            return self.link == other.link
        return self.ident == other.ident


@dataclass(frozen=True)
class Before:
    kind: str  # what .git was: "dir", "file", "link" or "none"
    present: frozenset[str] = frozenset()  # which PLANTABLE files it had
    hooks: dict[str, Entry] = field(default_factory=dict)
    config: Entry | None = None
    hooks_at: Entry | None = None  # .git/hooks itself
    configs: dict[str, Entry | None] = field(default_factory=dict)  # WORKSPACE_CONFIG, .claude, its settings


def _configs(root: int) -> dict[str, Entry | None]:
    found = {name: _entry(name, root) for name in (*WORKSPACE_CONFIG, CLAUDE)}
    if _kind(found[CLAUDE]) == "dir":
        found[f"{CLAUDE}/{CLAUDE_CONFIG}"] = _in_folder(root, CLAUDE, lambda fd: _entry(CLAUDE_CONFIG, fd), None)
    return found


def _undo_configs(root: int, was: dict[str, Entry | None]) -> list[str]:
    """Put back the workspace's config files a command changed, take away one it created."""
    why = "(agentls would start the programs it names; change it with the edit tools, which ask you)"
    notes: list[str] = []
    now = _configs(root)
    claude_was, claude_now = was.get(CLAUDE), now[CLAUDE]
    if claude_now is not None and claude_now.kind == "link" and not (claude_was is not None and
                                                                      claude_was.same(claude_now)):
        notes += _aside(root, CLAUDE, f"moved aside the link .claude the command made {why}")
    for rel in (*WORKSPACE_CONFIG, f"{CLAUDE}/{CLAUDE_CONFIG}"):
        old, new = was.get(rel), now.get(rel)
        if new is None and old is None or new is not None and old is not None and old.same(new):
            continue
        parent, _, name = rel.rpartition("/")
        if parent and _kind(claude_now) != "dir":
            continue
        if parent and old is not None and new is None and _kind(_entry(parent, root)) != "dir":
            continue
        def settle(fd: int, name: str = name, rel: str = rel, old: Entry | None = old) -> list[str]:
            if old is None:
                return _drop(fd, name, f"removed {rel}, which the command created {why}")
            return _put_back(fd, name, old, f"put back {rel}, which the command changed {why}")
        notes += _in_folder(root, parent, settle, []) if parent else settle(root)
    return notes


def _entry(name: str, dir_fd: int) -> Entry | None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    ident = (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns)
    try:
        if stat.S_ISLNK(st.st_mode):
            return Entry(ident, link=os.readlink(name, dir_fd=dir_fd))
        if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_REMEMBERED:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dir_fd)
            with os.fdopen(fd, "rb") as f:
                return Entry(ident, data=f.read(MAX_REMEMBERED + 1))
    except OSError:
        pass
    return Entry(ident)


def _kind(entry: Entry | None) -> str:
    return "none" if entry is None else entry.kind


def _open(name: str, dir_fd: int | None) -> int | None:
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except (OSError, ValueError):
        return None


def _entries(dir_fd: int) -> dict[str, Entry]:
    found: dict[str, Entry] = {}
    try:
        names = os.listdir(dir_fd)
    except OSError:
        return found
    for name in names:
        entry = _entry(name, dir_fd)
        if entry is not None:
            found[name] = entry
    return found


def before(workspace: Path) -> Before:
    root = _open(str(workspace), None)
    if root is None:
        return Before("none")
    try:
        configs = _configs(root)
        kind = _kind(_entry(".git", root))
        git = _open(".git", root) if kind == "dir" else None
        if git is None:
            return Before(kind, configs=configs)
        try:
            present = frozenset(n for n in PLANTABLE if _entry(n, git) is not None)
            hooks_at = _entry("hooks", git)
            hooks = _in_folder(git, "hooks", _entries, dict[str, Entry]()) if _kind(hooks_at) == "dir" else {}
            return Before(kind, present, hooks, _entry("config", git), hooks_at, configs)
        finally:
            os.close(git)
    finally:
        os.close(root)


def _in_folder(parent: int, name: str, work: Callable[[int], T], missing: T) -> T:
    """``work`` on the folder ``name`` in ``parent`` opened without following a link, or ``missing``."""
    fd = _open(name, parent)
    if fd is None:
        return missing
    try:
        return work(fd)
    finally:
        os.close(fd)


def undo(workspace: Path, was: Before) -> list[str]:
    """Put back what the command changed that git would run or follow; what was done, one line each."""
    root = _open(str(workspace), None)
    if root is None:
        return []
    try:
        return _undo_configs(root, was.configs) + _undo(root, was)
    finally:
        os.close(root)


def _undo(root: int, was: Before) -> list[str]:
    kind = _kind(_entry(".git", root))
    notes: list[str] = []
    if kind != was.kind:
        if kind in ("file", "link") and was.kind in ("dir", "none"):  # pointing git at another folder's hooks
            return _aside(root, ".git", f".git was {_name(was.kind)} and the command made it {_name(kind)} (it would "
                                        "point git elsewhere): moved it aside to .git.agentls-removed; check the "
                                        "repository before you use git here")
        if was.kind != "none":
            notes.append(f".git was {_name(was.kind)} and is now {_name(kind)}: check it before you use git here")
    if kind != "dir":
        return notes
    git = _open(".git", root)
    if git is None:
        return notes
    try:
        return notes + _undo_git(git, was)
    finally:
        os.close(git)


def _undo_git(git: int, was: Before) -> list[str]:
    notes: list[str] = []
    for name in PLANTABLE:
        if name not in was.present and _entry(name, git) is not None:
            notes += _drop(git, name, f"removed .git/{name}, which the command created (it would point git "
                                      "elsewhere)")
    notes += _undo_hooks(git, was)
    config = _entry("config", git)
    if was.config is not None:
        if config is None or not was.config.same(config):
            notes += _put_back(git, "config", was.config, "put back .git/config, which the command changed (git "
                                                          "runs what its settings name)")
    elif config is not None and config.kind != "file":
        notes += _aside(git, "config", f"the command made .git/config {_name(config.kind)}: moved it aside "
                                       "(git would read another file's settings)")
    elif config is not None and (config.data is None or RUNS.search(config.data.decode("utf-8", "replace"))):
        notes.append("the command created a repository whose .git/config names a program git would run: check "
                     "it before you use git here")
    return notes


def _undo_hooks(git: int, was: Before) -> list[str]:
    notes: list[str] = []
    now = _entry("hooks", git)
    if was.hooks_at is not None and now is not None and was.hooks_at.kind == "link" and was.hooks_at.same(now):
        return notes  # the user's own link to a shared hooks folder, unchanged: not looked into
    if now is not None and now.kind != "dir":
        notes += _aside(git, "hooks", f"the command made .git/hooks {_name(now.kind)}: moved it aside (git would "
                                      "run the hooks it points to)")
        now = None
    if was.hooks_at is not None and was.hooks_at.kind == "link":
        return notes + _put_back(git, "hooks", was.hooks_at, "put back the link .git/hooks, which the command "
                                                             "changed")
    if now is None and was.hooks:
        try:
            os.mkdir("hooks", 0o755, dir_fd=git)
        except OSError as exc:
            return notes + [f"could not put back .git/hooks ({exc.strerror})"]
    none: list[str] = []
    return notes + _in_folder(git, "hooks", lambda fd: _undo_hook_files(fd, was), none)


def _undo_hook_files(hooks: int, was: Before) -> list[str]:
    notes: list[str] = []
    now = _entries(hooks)
    for name, entry in sorted(now.items()):
        old = was.hooks.get(name)
        if old is not None and old.same(entry):
            continue
        if was.kind == "none" and name.endswith(SAMPLE) and entry.kind == "file":
            continue  # what `git init` puts there
        if name.endswith(ASIDE) or ASIDE + "." in name:
            continue  # what an earlier undo moved aside: git runs no hook of that name
        if old is not None:
            notes += _put_back(hooks, name, old, f"put back .git/hooks/{name}, which the command changed")
        else:
            notes += _drop(hooks, name, f"removed .git/hooks/{name}, which the command planted")
    for name, old in sorted(was.hooks.items()):
        if name not in now:
            notes += _put_back(hooks, name, old, f"put back .git/hooks/{name}, which the command removed")
    return notes


def _name(kind: str) -> str:
    return {"dir": "a folder", "file": "a file", "link": "a symlink", "none": "missing"}[kind]


def _free(dir_fd: int, name: str) -> str:
    """A name beside ``name`` that is not taken: ``name.agentls-removed``, then ``.2``, ``.3``…"""
    candidate, n = name + ASIDE, 1
    while _entry(candidate, dir_fd) is not None:
        n += 1
        candidate = f"{name}{ASIDE}.{n}"
    return candidate


def _aside(dir_fd: int, name: str, note: str) -> list[str]:
    """Rename ``name`` (itself, never what a link points to) out of git's way; nothing is lost."""
    try:
        os.rename(name, _free(dir_fd, name), src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError as exc:
        return [f"could not move {name} aside ({exc.strerror}): {note.split(':')[0]}"]
    return [note]


def _drop(dir_fd: int, name: str, note: str) -> list[str]:
    """Take away what the command created: a file or link is removed (a link, not its target), a folder
    moved aside."""
    entry = _entry(name, dir_fd)
    if entry is not None and entry.kind == "dir":
        return _aside(dir_fd, name, note)
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return []
    except OSError as exc:
        return [f"could not remove {name} ({exc.strerror}): {note.split(',')[0]} failed"]
    return [note]


def _put_back(dir_fd: int, name: str, old: Entry, note: str) -> list[str]:
    """Replace whatever ``name`` is now by what it was: a small file's bytes and mode, or a link. What was
    neither (larger than MAX_REMEMBERED) cannot be put back: the command's version is moved aside."""
    current = _entry(name, dir_fd)
    if old.data is None and old.link is None:
        return _aside(dir_fd, name, f"moved aside {name}, which the command changed (too large to keep a copy "
                                    "of, so not put back)") if current is not None else []
    if current is not None:
        if current.kind == "dir":
            moved = _aside(dir_fd, name, "")
            if moved != [""]:
                return moved
        else:
            try:
                os.unlink(name, dir_fd=dir_fd)
            except OSError as exc:
                return [f"could not put back {name} ({exc.strerror})"]
    try:
        if old.link is not None:
            os.symlink(old.link, name, dir_fd=dir_fd)
        else:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=dir_fd)
            with os.fdopen(fd, "wb") as f:
                f.write(old.data or b"")
                os.fchmod(f.fileno(), stat.S_IMODE(old.ident[0]))
    except OSError as exc:
        return [f"could not put back {name} ({exc.strerror})"]
    return [note]
