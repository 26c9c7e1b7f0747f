"""One session's sandbox: how each command runs (confined, unconfined, or refused), the notice said
once when no mechanism works here, the programs the user let run outside it (``outside.py``), what it
protects (``protect.py``), and what a command left for git to run is undone after it (``plants.py``)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from . import plants
from .denial import Denial, find_denial
from .detect import Detected, detect
from .outside import program_key
from .policy import BUBBLEWRAP, Confinement, SandboxConfig, writable_paths
from .protect import agentls_paths, exposed, mcp_paths, real_existing, workspace_paths

HOW_TO_GET_ONE = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or use a Linux kernel with "
                  "Landlock (5.13+)")


def outside_key(key: str) -> str:
    """The permission key of "always run it outside the sandbox" for a program's key (``program_key``)."""
    return f"unsandboxed:{key}"


@dataclass(frozen=True)
class Plan:
    confinement: Confinement | None  # None: the command runs unconfined
    in_server: bool = False  # strict: never in the editor's terminal, which nothing confines
    refusal: str | None = None  # strict without a mechanism: the command does not run
    notice: str | None = None  # to tell the user, once per session


class CommandSandbox:
    def __init__(self, config: SandboxConfig, root: Path,
                 allowed_outside: Callable[[str], bool] = lambda key: False) -> None:
        self.config = config
        self.root = root
        self._allowed_outside = allowed_outside  # key -> the user said "always" to running it unconfined
        self._noticed = False
        self._tmp: Path | None = None
        self._protected: tuple[Path, ...] = ()

    def protect(self, paths: list[Path]) -> None:
        """Keep these read-only in every later command too (what the session's MCP servers run)."""
        self._protected = tuple(dict.fromkeys([*self._protected, *paths]))

    def protect_servers(self, specs: list[object]) -> None:
        self.protect(mcp_paths(specs))

    def program_key(self, command: str, cwd: Path, env: dict[str, str] | None) -> str | None:
        """What "always run it outside" would cover for ``command``, or None when nothing may (``outside.py``)."""
        path = (env or {}).get("PATH", os.environ.get("PATH"))
        return program_key(command, cwd, path, [self.root, *writable_paths(self.config.writable, self.root)])

    async def status(self) -> dict[str, Any]:
        """What the sandbox is in this session (``mechanism`` None when commands run unconfined)."""
        found = await detect()
        active = found.mechanism if self.config.mode != "off" else None
        writable = [self.root, *writable_paths(self.config.writable, self.root)]
        protected = [*agentls_paths(), *workspace_paths(self.root, make=False), *self._protected]
        return {"mode": self.config.mode, "network": "on" if self.config.network else "off",
                "mechanism": active, "detail": found.detail if self.config.mode != "off" else "turned off",
                "writable": [str(p) for p in writable],
                "networkConfined": bool(active) and found.network_confined,
                "tmp": "private" if active == BUBBLEWRAP else "shared" if active else None,
                "protected": [str(p) for p in real_existing(protected)],
                "unprotected": [str(p) for p in exposed(writable, protected)]}

    async def plan(self, key: str | None, *, dangerous: bool = False) -> Plan:
        """How to run a command whose program's key (``program_key``) is ``key`` (None: none). An "always
        outside" answer for the program never covers a dangerous command."""
        mode = self.config.mode
        if mode == "off":
            return Plan(None)
        strict = mode == "strict"
        if key is not None and self._allowed_outside(key) and not dangerous:
            return Plan(None, in_server=strict)
        found = await detect()
        if found.mechanism is None:
            if strict:
                return Plan(None, in_server=True, refusal=(
                    f"error: the sandbox setting is 'strict' and no sandbox works here ({found.detail}); the command "
                    f"did not run. To run commands, {HOW_TO_GET_ONE}, or set sandbox = \"auto\" or \"off\"."))
            return Plan(None, notice=self._notice(found))
        tmp = await self._private_tmp() if found.mechanism == BUBBLEWRAP else None
        return Plan(Confinement(found.mechanism, self.root, writable_paths(self.config.writable, self.root),
                                self.config.network, found.program, tmp, self._protected), in_server=strict)

    async def _private_tmp(self) -> Path:
        """The session's /tmp under bubblewrap: made on its first command, removed by ``close``."""
        if self._tmp is None:
            made = await anyio.to_thread.run_sync(lambda: tempfile.mkdtemp(prefix="agentls-sandbox-tmp-"))
            self._tmp = Path(made)
        return self._tmp

    async def close(self) -> None:
        tmp, self._tmp = self._tmp, None
        if tmp is not None:
            await anyio.to_thread.run_sync(lambda: shutil.rmtree(tmp, ignore_errors=True))

    def _notice(self, found: Detected) -> str | None:
        if self._noticed:
            return None
        self._noticed = True
        return (f"agentls: no sandbox is available here, so commands run unconfined ({found.detail}). To confine "
                f"them, {HOW_TO_GET_ONE}. Set sandbox = \"strict\" to refuse commands without a sandbox, or "
                f"sandbox = \"off\" to silence this notice.")

    @staticmethod
    async def before(confinement: Confinement) -> plants.Before:
        """What the workspace's git has now, to put back what a command changes (``plants.py``)."""
        return await anyio.to_thread.run_sync(plants.before, confinement.workspace)

    @staticmethod
    async def after(confinement: Confinement, was: plants.Before) -> list[str]:
        return await anyio.to_thread.run_sync(plants.undo, confinement.workspace, was)

    @staticmethod
    def denial(output: str, exit_code: int | None, confinement: Confinement, cwd: Path) -> Denial | None:
        return find_denial(output, exit_code, confinement, cwd)
