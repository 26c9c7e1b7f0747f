"""What a sandboxed command could still leave for git to run later, looked at before and after each command
and undone, with a note for the model and the user (docs/sandbox.md).

Under bubblewrap the git directory's hooks and config cannot change (``protect.py``), but a file git
would follow can still be created where none was: ``commondir`` or ``config.worktree`` (the first points
git's config and hooks at another folder). Under Landlock, which cannot make a folder inside the
workspace read-only, the hooks and the config themselves can change, and ``.git`` can be renamed and
rebuilt: so the hooks and the config are remembered before the command and put back after it. A
repository the command created itself (``git init``) keeps what git made, never a hook it did not.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

# Files git follows when they exist, that an ordinary repository has not.
PLANTABLE = ("commondir", "config.worktree")
MAX_REMEMBERED = 1 << 20  # bytes per hook file or config kept to put back
SAMPLE = ".sample"
# Settings under which git runs a program (in a repository the command created, they are reported).
RUNS = re.compile(r"^\s*(hookspath|fsmonitor|sshcommand|editor|pager|askpass|textconv|command|driver|clean|smudge|"
                  r"process|helper|program|path)\s*=|^\s*\w+\s*=\s*\"?!", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Before:
    kind: str  # what .git was: "dir", "file", "link" or "none"
    present: frozenset[str] = frozenset()  # which PLANTABLE files it had
    hooks: dict[str, tuple[bytes, int]] = field(default_factory=dict)  # name -> (bytes, mode)
    config: bytes | None = None


def _kind(path: Path) -> str:
    if path.is_symlink():
        return "link"
    return "dir" if path.is_dir() else "file" if path.exists() else "none"


def _read(path: Path) -> bytes | None:
    try:
        if path.is_file() and not path.is_symlink() and path.stat().st_size <= MAX_REMEMBERED:
            return path.read_bytes()
    except OSError:
        pass
    return None


def _hooks(folder: Path) -> dict[str, tuple[bytes, int]]:
    found: dict[str, tuple[bytes, int]] = {}
    try:
        entries = list(folder.iterdir())
    except OSError:
        return found
    for entry in entries:
        data = _read(entry)
        if data is not None:
            try:
                found[entry.name] = (data, entry.stat().st_mode & 0o7777)
            except OSError:
                continue
    return found


def before(workspace: Path) -> Before:
    dot = workspace / ".git"
    kind = _kind(dot)
    if kind != "dir":
        return Before(kind)
    present = frozenset(n for n in PLANTABLE if os.path.lexists(dot / n))
    return Before(kind, present, _hooks(dot / "hooks"), _read(dot / "config"))


def undo(workspace: Path, was: Before) -> list[str]:
    """Put back what the command changed that git would run or follow; what was done, one line each."""
    dot = workspace / ".git"
    kind = _kind(dot)
    notes: list[str] = []
    if kind != was.kind and was.kind != "none":
        if was.kind == "dir" and kind != "none":  # a file or a link pointing git at another folder's hooks
            return _remove(dot, f".git was a folder and the command made it a {_name(kind)} (it would point git "
                                "elsewhere): moved it aside to .git.agentls-removed; check the repository "
                                "before you use git here")
        notes.append(f".git was a {_name(was.kind)} and is now a {_name(kind)}: check it before you use git here")
    if kind != "dir":
        return notes
    for name in PLANTABLE:
        if name not in was.present and os.path.lexists(dot / name):
            notes += _remove(dot / name, f"removed .git/{name}, which the command created (it would point git "
                                          "elsewhere)")
    hooks = dot / "hooks"
    for name, now in _hooks(hooks).items():
        if was.kind == "none" and name.endswith(SAMPLE):
            continue  # what `git init` puts there
        if was.hooks.get(name) != now:
            if name in was.hooks:
                notes += _write(hooks / name, was.hooks[name], f"put back .git/hooks/{name}, which the command "
                                                               "changed")
            else:
                notes += _remove(hooks / name, f"removed .git/hooks/{name}, which the command planted")
    for name, old in was.hooks.items():
        if not os.path.lexists(hooks / name):
            notes += _write(hooks / name, old, f"put back .git/hooks/{name}, which the command removed")
    config = _read(dot / "config")
    if was.config is not None and config != was.config:
        notes += _write(dot / "config", (was.config, 0o644), "put back .git/config, which the command changed "
                                                             "(git runs what its settings name)")
    elif was.kind == "none" and config is not None and RUNS.search(config.decode("utf-8", "replace")):
        notes.append("the command created a repository whose .git/config names a program git would run: check "
                     "it before you use git here")
    return notes


def _name(kind: str) -> str:
    return {"dir": "folder", "file": "file", "link": "symlink", "none": "missing path"}[kind]


def _remove(path: Path, note: str) -> list[str]:
    try:
        if path.name == ".git" or (path.is_dir() and not path.is_symlink()):
            path.rename(path.with_name(path.name + ".agentls-removed"))
        else:
            path.unlink()
    except OSError as exc:
        return [f"could not remove {path.name} ({exc.strerror}): {note.split(',')[0]} failed"]
    return [note]


def _write(path: Path, old: tuple[bytes, int], note: str) -> list[str]:
    try:
        if path.is_symlink() or path.is_dir():
            _remove(path, "")
        path.write_bytes(old[0])
        os.chmod(path, old[1])
    except OSError as exc:
        return [f"could not put back {path.name} ({exc.strerror})"]
    return [note]
