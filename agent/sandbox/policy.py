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

# Package caches build tools write to; only those that exist are made writable.
DEFAULT_WRITABLE: tuple[str, ...] = ("~/.cache", "~/.npm", "~/.cargo/registry", "~/.cargo/git", "~/go/pkg/mod",
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
