"""Where a session's updates go: the host (the editor), and an extra listener when one was given."""

from __future__ import annotations

import inspect
import logging

import anyio

from .disk_host import UpdateCallback
from .host import Host
from .types import SessionUpdate

log = logging.getLogger("agentls.agent")


class UpdateSender:
    """Sends each update to the host, then to ``listener``. A client that cannot take an update never
    breaks the turn: the failure is logged and the turn goes on (cancellation still propagates)."""

    def __init__(self, host: Host, listener: UpdateCallback | None = None) -> None:
        self.host = host
        self.listener = listener

    async def send(self, update: SessionUpdate) -> None:
        try:
            await self.host.send_update(update)
            if self.listener is not None:
                result = self.listener(update)
                if inspect.isawaitable(result):
                    await result
        except (anyio.get_cancelled_exc_class(), KeyboardInterrupt):
            raise
        except Exception:
            log.exception("sending an update failed")
