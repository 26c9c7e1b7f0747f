"""What the sandbox settings are, and what one command's confinement is."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Mode = Literal["auto", "strict", "off"]
MODES: tuple[Mode, ...] = ("auto", "strict", "off")
NETWORK = ("off", "on")
BUBBLEWRAP, LANDLOCK, SEATBELT = "bubblewrap", "landlock", "seatbelt"

# Package caches build tools write to; only those that exist are made writable. Each tool's own folder,
# never the whole ~/.cache: it also holds what runs later outside the sandbox (agentls's model,
# pre-commit's hook environments, downloaded browsers and models). docs/sandbox.md has the reasons.
DEFAULT_WRITABLE: tuple[str, ...] = ("~/.cache/pip", "~/.cache/uv", "~/.cache/pypoetry", "~/.cache/go-build",
                                     "~/.cache/yarn", "~/.npm", "~/.cargo/registry", "~/.cargo/git", "~/go/pkg/mod",
                                     "~/.m2/repository", "~/.gradle/caches")


@dataclass(frozen=True)
class SandboxConfig:
    """The settings: ``mode`` auto (sandbox when a mechanism works here), strict (refuse commands
    without one, and run them in-server rather than in the editor's terminal), off."""

    mode: Mode = "auto"
    network: bool = False
    writable: tuple[str, ...] = DEFAULT_WRITABLE


@dataclass(frozen=True)
class Confinement:
    """One command's sandbox: the mechanism, the paths it may write, whether it may use the network."""

    mechanism: str
    workspace: Path
    writable: tuple[Path, ...] = ()
    network: bool = False
    program: str = ""  # bwrap or sandbox-exec; the Python running the Landlock launcher
    tmp: Path | None = None  # the session's own folder, seen as /tmp (bubblewrap); None: an empty tmpfs
    protected: tuple[Path, ...] = ()  # read-only besides agentls's own files and the workspace's git (MCP servers)


STRICTNESS = {"off": 0, "auto": 1, "strict": 2}


def loosens(key: str, value: object, current: object) -> bool:
    """Whether a workspace file's ``key = value`` would loosen the sandbox settled so far (``current``):
    a weaker mode, the network on, or a writable path not already writable."""
    if key == "sandbox" and isinstance(value, str) and isinstance(current, str):
        return STRICTNESS.get(value, 2) < STRICTNESS.get(current, 2)
    if key == "sandbox_network":
        return value in ("on", True) and current != "on"
    if key == "sandbox_writable":
        allowed = tuple(current) if isinstance(current, (list, tuple)) else ()
        items = [value] if isinstance(value, str) else value
        return not isinstance(items, (list, tuple)) or any(i not in allowed for i in items)
    return False


def config_from(mode: str, network: str, writable: tuple[str, ...]) -> SandboxConfig:
    """The ``SandboxConfig`` of the settings ``sandbox``, ``sandbox_network``, ``sandbox_writable``."""
    return SandboxConfig(mode="strict" if mode == "strict" else "off" if mode == "off" else "auto",
                         network=network == "on", writable=tuple(writable))


def writable_paths(entries: tuple[str, ...], workspace: Path) -> tuple[Path, ...]:
    """The extra writable paths that exist, ``~`` expanded and symlinks resolved, minus the workspace
    itself and anything beneath it (already writable)."""
    found: list[Path] = []
    for entry in entries:
        path = Path(os.path.expanduser(entry))
        if not path.is_absolute():
            continue
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if real == Path("/") or real == workspace or workspace in real.parents or real in found:
            continue
        found.append(real)
    return tuple(found)
