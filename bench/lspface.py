"""Driving ``agentls lsp`` for the concurrency and streaming benchmarks: start, initialize, sessions, turns."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bench.rpc import Peer, RpcError, agentls_command, lsp_initialize_params, lsp_shutdown
from bench.startup import child_env


def _answer_server_request(method: str, params: Any) -> Any:
    if method == "workspace/configuration":
        return [None for _ in (params or {}).get("items", [])]
    if method in ("window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability"):
        return None
    if method == "workspace/applyEdit":
        return {"applied": False, "failureReason": "the benchmark client applies no edits"}
    raise RpcError({"code": -32601, "message": f"the benchmark client has no handler for {method}"})


@asynccontextmanager
async def lsp_server(tmp: Path, options: dict[str, Any], *, stderr: Path | None = None) -> AsyncIterator[Peer]:
    """A started and initialized ``agentls lsp``; shut down and reaped on exit."""
    peer = await Peer.spawn([*agentls_command(), "lsp"], "lsp", env=child_env(tmp), cwd=tmp, stderr=stderr,
                            inherit_env=False)
    peer.on_request = _answer_server_request
    try:
        await peer.request("initialize", lsp_initialize_params(tmp, options), timeout=60)
        peer.notify("initialized", {})
        yield peer
    finally:
        await peer.close(lambda: lsp_shutdown(peer), timeout=15)


def bench_options(model: str, base_url: str, **extra: Any) -> dict[str, Any]:
    return {"model": model, "baseUrl": base_url, "provider": "openai", "apiKeyEnv": "AGENTLS_BENCH_KEY",
            "approval": "yolo", "maxIterations": 200, "titles": "prompt", **extra}


async def new_session(peer: Peer, cwd: Path) -> str:
    result = await peer.request("agent/newSession", {"cwd": str(cwd)}, timeout=60)
    return str(result["sessionId"])


async def turn(peer: Peer, session_id: str, prompt: str, timeout: float = 300) -> dict[str, Any]:
    result: dict[str, Any] = await peer.request("agent/turn", {"sessionId": session_id, "prompt": prompt},
                                                timeout=timeout)
    return result


async def gather_turns(peer: Peer, session_ids: list[str], prompt: str) -> list[dict[str, Any]]:
    return list(await asyncio.gather(*(turn(peer, s, prompt) for s in session_ids)))
