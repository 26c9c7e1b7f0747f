"""One local model server per process and model file, shared by every agent that uses it.

An editor face runs one agent per session. Each used to start its own llama.cpp child (2 GB of RAM
and a load each); now the sessions share one, which stays loaded (and keeps its prompt cache warm)
between turns and sessions until the last agent using it closes. llama.cpp queues concurrent
requests on its one slot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .runtime import LocalModelServer

_servers: dict[str, tuple[LocalModelServer, set[int]]] = {}


def acquire(owner: object, model_path: Path | None, progress: Any = None, keep_alive: float = 0.0) -> LocalModelServer:
    """The server for ``model_path`` (None: the bundled model), registering ``owner`` as a user. ``keep_alive``:
    seconds it outlives this process, detached (agent/local/keeper.py); the first user's setting counts."""
    key = str(model_path.expanduser().resolve()) if model_path is not None else ""
    entry = _servers.get(key)
    if entry is None:
        entry = _servers[key] = (LocalModelServer(model_path, progress=progress, keep_alive=keep_alive), set())
    entry[1].add(id(owner))
    return entry[0]


async def release(owner: object, server: LocalModelServer) -> None:
    """``owner`` is done with ``server``; the last one out stops it."""
    for key, (srv, owners) in list(_servers.items()):
        if srv is server:
            owners.discard(id(owner))
            if owners:
                return
            del _servers[key]
    await server.stop()
