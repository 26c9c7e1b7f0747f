"""Real turns for the sandbox suite: a user who answers permission prompts, and what a turn's tools
returned (the ``make`` and ``mechanism`` fixtures are in conftest.py)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentls.agent.disk_host import DiskHost
from agentls.agent.host import PermissionDecision, PermissionRequest
from agentls.agent.result import TurnResult
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import Factory

class Answering(DiskHost):
    """A user who answers permission prompts with these option kinds in order (the last one repeats)."""

    def __init__(self, root: Path, answers: Iterable[str], on_update: Any = None) -> None:
        super().__init__(root, on_update)
        self.answers = list(answers)
        self.asked: list[PermissionRequest] = []

    async def request_permission(self, request: PermissionRequest) -> PermissionDecision | None:
        self.asked.append(request)
        kind = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return PermissionDecision(next(o.option_id for o in request.options if o.kind == kind))


def outputs(result: TurnResult) -> list[str]:
    return [str(m["content"]) for m in result.messages if m.get("role") == "tool"]


async def turn(make: Factory, srv: ScriptedServer, *commands: str, **kw: Any) -> list[str]:
    srv.push(tools(*[call("terminal", {"command": c}) for c in commands]), text("done"))
    return outputs(await make(**kw).run_conversation("run them"))


def asked_outside(host: Answering) -> list[PermissionRequest]:
    return [r for r in host.asked if "sandbox" in r.raw_input]
