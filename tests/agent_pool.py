"""The agents a fixture's factory builds, closed together when the test ends (tests/*/conftest.py)."""

from __future__ import annotations

from typing import Any

from agentls.agent import AIAgent


class AgentPool:
    def __init__(self) -> None:
        self.made: list[AIAgent] = []

    def make(self, options: dict[str, Any]) -> AIAgent:
        agent = AIAgent(**options)
        self.made.append(agent)
        return agent

    async def aclose(self) -> None:
        for agent in self.made:
            await agent.close()
