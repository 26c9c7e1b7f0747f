"""The core's own host: files on the disk, commands as child processes (``agentls.agent.process``)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from agentls.agent.host import CommandResult, CommandSpec, PermissionDecision, PermissionRequest, WriteOutcome
from agentls.agent.process import run_process
from agentls.agent.types import SessionUpdate

UpdateCallback = Callable[[SessionUpdate], Awaitable[None] | None]


class DiskHost:
    """Reads and writes the disk; runs commands itself; cannot ask the user (the policy decides)."""

    def __init__(self, root: Path | str, on_update: UpdateCallback | None = None) -> None:
        self._root = Path(root).resolve()
        self._on_update = on_update

    @property
    def root(self) -> Path:
        return self._root

    async def read_text(self, path: Path) -> str:
        return await anyio.Path(path).read_text(encoding="utf-8")

    async def write_text(self, path: Path, content: str, *, previous: str | None) -> WriteOutcome:
        target = anyio.Path(path)
        await target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.agentls-tmp")
        await tmp.write_text(content, encoding="utf-8", newline="")
        await tmp.replace(target)
        return WriteOutcome(True)

    async def delete_file(self, path: Path) -> WriteOutcome:
        try:
            await anyio.Path(path).unlink()
        except FileNotFoundError:
            pass
        return WriteOutcome(True)

    async def run_command(self, spec: CommandSpec) -> CommandResult:
        return await run_process(spec)

    async def request_permission(self, request: PermissionRequest) -> PermissionDecision | None:
        return None

    async def send_update(self, update: SessionUpdate) -> None:
        if self._on_update is not None:
            result = self._on_update(update)
            if inspect.isawaitable(result):
                await result

    async def release(self, task_id: str | None = None) -> None:
        return None
