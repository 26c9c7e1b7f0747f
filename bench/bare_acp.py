"""The import-time floor of the ACP framework: a bare ``acp`` SDK agent on stdio that only initializes."""

import asyncio
from typing import Any

from acp import Agent, InitializeResponse, run_agent


class BareAgent(Agent):  # only initialize is ever called; the other methods stay abstract
    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=protocol_version)


if __name__ == "__main__":
    asyncio.run(run_agent(BareAgent()))  # type: ignore[abstract]
