"""What a sandboxed command must never change, because something runs or trusts it later, outside any
sandbox (the threat model: docs/sandbox.md).

Two kinds: what agentls itself runs, loads or trusts (its config, the data dir with the session store and
the model's stamp, the model cache, the interpreter, venv and package it runs from, the MCP servers it
starts), and what other programs run later from the workspace (git's hooks and config and the files that
point git elsewhere; the editors' folders of tasks and settings).

A read-only bind protects a path only while nobody can move it. A mount point cannot be renamed or
removed (EBUSY), but a folder above one can, and the mount moves with it (``mv .git .git-old``). So each
folder between the writable mount and a protected path is bound onto itself first ("pinned"): the whole
chain is then mount points, and none of it can be renamed, removed or replaced.
"""

from __future__ import annotations

import os
import shutil
import site
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from .plants import CLAUDE, CLAUDE_CONFIG, WORKSPACE_CONFIG

# In a git directory: what git runs (hooks), what says what it runs (config, config.worktree, info/attributes)
# and what points git at another directory's hooks and config (commondir).
GIT_DIR_FILES = ("hooks", "config", "config.worktree", "info", "commondir")
# In a linked worktree's own git directory (<common>/worktrees/<name>).
WORKTREE_FILES = ("commondir", "config.worktree", "gitdir")
# Made before the sandbox starts when missing (a bind needs something to bind): empty, harmless to git.
GIT_DIR_MADE = ("hooks", "info")
# What editors run from a workspace: tasks, launch configurations, interpreter and tool paths.
EDITOR_FOLDERS = (".vscode", ".idea")
MAX_MODULE_DEPTH = 4  # .git/modules/a/modules/b/...
# How an MCP server's launcher caches the code it runs (``npx -y pkg``, ``uvx pkg``).
LAUNCHER_CACHES = {"npx": ("~/.npm/_npx",), "uvx": ("~/.cache/uv", "~/.local/share/uv")}


def agentls_paths() -> list[Path]:
    """What agentls runs, loads or trusts later: config, data dir, model cache, interpreter, package."""
    from platformdirs import user_cache_dir, user_config_dir

    from ..config import user_config_path
    from ..local.model import cache_dir
    from ..sessions.store import default_db_path

    paths = [Path(user_config_dir("agentls")), user_config_path(), default_db_path().parent,
             Path(user_cache_dir("agentls")), cache_dir(), Path(sys.prefix), Path(sys.exec_prefix),
             Path(sys.base_prefix), Path(os.path.realpath(sys.executable))]
    package = Path(__file__).resolve().parents[1]  # agent/ (installed as agentls.agent)
    paths += [package, package.parent / "server"] if (package.parent / "pyproject.toml").exists() else [package.parent]
    if site.ENABLE_USER_SITE:
        paths.append(Path(site.getusersitepackages()))
    return paths


def mcp_paths(specs: Iterable[object]) -> list[Path]:
    """What the MCP servers a session starts run: each stdio server's program (resolved on its ``PATH``), the
    files among its arguments (a script), and the cache its launcher runs code from (npx, uvx)."""
    found: list[Path] = []
    for spec in specs:
        command, args = getattr(spec, "command", None), tuple(getattr(spec, "args", ()) or ())
        if not isinstance(command, str) or not command:
            continue
        cwd = str(getattr(spec, "cwd", None) or os.getcwd())
        env = dict(getattr(spec, "env", ()) or ())
        program = command if "/" in command else shutil.which(command, path=env.get("PATH", os.environ.get("PATH")))
        if program:
            found.append(Path(os.path.realpath(os.path.join(cwd, program))))
            found += [Path(os.path.expanduser(p)) for p in LAUNCHER_CACHES.get(os.path.basename(program), ())]
        for arg in args:
            if isinstance(arg, str) and arg and not arg.startswith("-"):
                candidate = os.path.join(cwd, os.path.expanduser(arg))
                if os.path.isfile(candidate):
                    found.append(Path(os.path.realpath(candidate)))
    return found


def workspace_paths(workspace: Path, make: bool = True) -> list[Path]:
    """What other programs run later from the workspace: its git directory's hooks and config (and those of
    the repositories it points to: a linked worktree's common dir, submodules), a ``.git`` that is a file,
    the editors' folders, and the config files with which agentls starts programs (hooks, MCP servers). ``make``: create an empty ``hooks``/``info`` where missing, so they can be
    bound read-only (a command must not be able to create them either)."""
    found: list[Path] = [workspace / name for name in (*EDITOR_FOLDERS, *WORKSPACE_CONFIG)]
    if (workspace / CLAUDE).is_dir() and not (workspace / CLAUDE).is_symlink():
        found.append(workspace / CLAUDE / CLAUDE_CONFIG)
    dot = workspace / ".git"
    if dot.is_dir() and not dot.is_symlink():
        gitdir: Path | None = dot
    else:
        if dot.is_file() and not dot.is_symlink():
            found.append(dot)  # "gitdir: ..." (a linked worktree, a submodule): read-only, never replaced
        gitdir = _pointed(dot)
    if gitdir is None:
        return found
    common = _pointed(gitdir / "commondir", base=gitdir) or gitdir
    for repo in dict.fromkeys([gitdir, common]):
        found += _git_dir(repo, make)
        found += [wt / name for wt in _children(repo / "worktrees") for name in WORKTREE_FILES]
        found += [p for module in _modules(repo / "modules", MAX_MODULE_DEPTH) for p in _git_dir(module, False)]
    return found


def _git_dir(gitdir: Path, make: bool) -> list[Path]:
    if make and (gitdir / "HEAD").is_file():
        for name in GIT_DIR_MADE:
            try:
                (gitdir / name).mkdir(exist_ok=True)
            except OSError:
                pass
    return [gitdir / name for name in GIT_DIR_FILES]


def _pointed(path: Path, base: Path | None = None) -> Path | None:
    """The directory a ``.git`` file (``gitdir: X``), a ``commondir`` file or a symlink points to."""
    try:
        if path.is_symlink():
            return Path(os.path.realpath(path))
        text = path.read_text(errors="replace")[:4096].strip()
    except (OSError, ValueError):
        return None
    text = text.removeprefix("gitdir:").strip()
    if not text:
        return None
    return Path(os.path.realpath((base or path.parent) / text))


def _children(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []


def _modules(folder: Path, depth: int) -> list[Path]:
    """Submodules' git directories below ``.git/modules`` (named by path, so possibly nested folders)."""
    if depth <= 0:
        return []
    found: list[Path] = []
    for child in _children(folder):
        if (child / "HEAD").is_file():
            found.append(child)
            found += _modules(child / "modules", depth - 1)
        else:
            found += _modules(child, depth - 1)
    return found


def real_existing(paths: Iterable[Path]) -> list[Path]:
    """Each path that exists, through its symlinks, once, without any that lie inside another."""
    real: list[Path] = []
    for path in paths:
        try:
            if os.path.lexists(path):
                real.append(Path(os.path.realpath(path)))
        except (OSError, ValueError):
            continue
    unique = sorted(set(real), key=lambda p: (len(p.parts), str(p)))
    return [p for p in unique if p != Path("/") and not any(q in p.parents for q in unique)]


def layout(roots: Sequence[Path], protected: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """For bubblewrap: the folders to pin (bind onto themselves, writable as before) and the paths to bind
    read-only, both parents first, so that nothing in ``protected`` can be written, moved or replaced from
    the writable ``roots``. A protected path outside every root is read-only already; one that holds a
    root cannot be made read-only without hiding that root, and is left (``agentls sandbox`` shows it)."""
    pins: set[Path] = set()
    readonly: list[Path] = []
    for path in real_existing(protected):
        inside = [r for r in roots if r == path or r in path.parents]
        if not inside or any(path in r.parents for r in roots):
            continue
        root = max(inside, key=lambda r: len(r.parts))
        pins.update(d for d in path.parents if root in d.parents)
        readonly.append(path)
    pins = {p for p in pins if p.is_dir() and not any(r == p or r in p.parents for r in readonly)}
    return sorted(pins, key=lambda p: (len(p.parts), str(p))), readonly


def exposed(roots: Sequence[Path], protected: Iterable[Path]) -> list[Path]:
    """The protected paths that hold a writable root, so cannot be made read-only (see ``layout``)."""
    return [p for p in real_existing(protected) if any(p in r.parents for r in roots)]


def carve(roots: Sequence[Path], protected: Iterable[Path]) -> list[Path]:
    """For Landlock, which can only allow whole hierarchies: each root that holds a protected path is
    replaced by its entries except the one leading there, recursively; a root that is protected goes. What
    is created later directly in a carved folder is then not writable (docs/sandbox.md)."""
    targets = real_existing(protected)
    out: list[Path] = []
    for root in roots:
        out += _carve(root, targets)
    return out


def _carve(root: Path, targets: list[Path]) -> list[Path]:
    if any(t == root for t in targets):
        return []
    below = [t for t in targets if root in t.parents]
    if not below:
        return [root]
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    out: list[Path] = []
    for entry in entries:
        if entry.is_symlink():
            continue
        out += _carve(entry, below) if entry.is_dir() else [] if entry in below else [entry]
    return out


def runs_later(workspace: Path, path: Path) -> tuple[bool, str] | None:
    """Why an edit of ``path`` (resolved, inside the workspace) is not an ordinary one, for the edit tools,
    which write outside the sandbox: ``(refused, reason)``. Inside a git directory (``.git/``, a submodule's,
    any folder with git's ``HEAD`` and ``objects``) it is refused; the editors' folders and the config with
    which agentls starts programs are edits that ask in every mode (docs/sandbox.md)."""
    try:
        rel = path.relative_to(workspace)
    except ValueError:
        return None
    parts = rel.parts
    for depth in range(len(parts) - 1, 0, -1):
        folder = workspace.joinpath(*parts[:depth])
        if parts[depth - 1] == ".git" or ((folder / "HEAD").is_file() and (folder / "objects").is_dir()):
            return True, (f"{rel.as_posix()} is inside a git directory; agentls does not edit git's own files (git "
                          "runs the programs its config and hooks name). Use git commands instead")
    if parts and (parts[0] in (*EDITOR_FOLDERS, *WORKSPACE_CONFIG) or parts[:2] == (CLAUDE, CLAUDE_CONFIG)):
        return False, f"{rel.as_posix()} names programs that run later outside the sandbox (editor tasks, hooks, servers)"
    return None
