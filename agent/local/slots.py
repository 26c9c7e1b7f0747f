"""A fast first step: the processed system prompt is saved to disk and restored by the next run.

Within one run llama.cpp's prompt cache (``cache_prompt``) already reuses the common prefix of the
previous request, so a step pays only for the new messages. A new ``agentls run`` starts a new server
whose cache is empty, and would process the whole system prompt and tool list again (tens of seconds on
2 cores). So ``SlotCachingProvider``:

- before its first request on a freshly started server, restores llama.cpp's slot 0 from
  ``<cache dir>/slots/<key>.bin`` if that file exists (``POST /slots/0?action=restore``): llama.cpp
  then reuses the common prefix of the restored tokens and the new prompt, as it does between steps;
- after the first request whose key has no file yet, saves the slot there (``action=save``).

The key is a hash of the model file, the context size and the request's system prompt and tools: a
different prompt gets its own file. At most ``MAX_FILES`` are kept (the oldest go). Failures are
logged and ignored: the cache only ever saves time.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from ..providers.base import ProviderRequest, ProviderResponse, StreamSink

if TYPE_CHECKING:
    from .runtime import LocalModelServer
    from ..providers.base import Provider

log = logging.getLogger(__name__)
MAX_FILES = 16
SLOT = 0


def prompt_key(model_id: str, request: ProviderRequest) -> str:
    h = hashlib.sha256()
    h.update(model_id.encode())
    h.update(b"\x00" + request.system.encode("utf-8", "surrogatepass"))
    h.update(b"\x00" + json.dumps(list(request.tools), sort_keys=True).encode())
    return h.hexdigest()[:24]


class SlotFiles:
    """llama.cpp's slot save/restore for one running server, by key."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def filename(self, key: str) -> str:
        return f"{key}.bin"

    async def exists(self, key: str) -> bool:
        return await anyio.Path(self.directory / self.filename(key)).is_file()

    async def _post(self, root_url: str, action: str, key: str) -> bool:
        try:
            async with httpx.AsyncClient(timeout=httpx.Timeout(60.0), trust_env=False) as client:
                resp = await client.post(f"{root_url}/slots/{SLOT}", params={"action": action},
                                         json={"filename": self.filename(key)})
        except httpx.HTTPError as exc:
            log.info("slot %s failed: %s", action, exc)
            return False
        if resp.status_code != 200:
            log.info("slot %s refused: HTTP %s %s", action, resp.status_code, resp.text[:200])
            return False
        return True

    async def restore(self, root_url: str, key: str) -> bool:
        if not await self.exists(key):
            return False
        ok = await self._post(root_url, "restore", key)
        if ok:  # used: keep it among the newest
            await anyio.to_thread.run_sync(lambda: (self.directory / self.filename(key)).touch())
        return ok

    async def save(self, root_url: str, key: str) -> bool:
        ok = await self._post(root_url, "save", key)
        if ok:
            await anyio.to_thread.run_sync(self._prune)
        return ok

    def _prune(self) -> None:
        files = sorted(self.directory.glob("*.bin"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in files[MAX_FILES:]:
            old.unlink(missing_ok=True)


class SlotCachingProvider:
    """Wraps the local model's OpenAI-compatible provider with slot restore (first request) and save."""

    name = "local"

    def __init__(self, inner: Provider, server: LocalModelServer) -> None:
        self.inner = inner
        self.server = server

    async def complete(self, request: ProviderRequest, sink: StreamSink | None = None) -> ProviderResponse:
        server = self.server
        files, root, generation = server.slot_files, server.root_url, server.starts
        key = prompt_key(server.model_id, request) if files is not None and root and request.tools else None
        if key is not None and files is not None and root and server.slot_state.get("restored") != generation:
            server.slot_state["restored"] = generation  # once per server start: later steps have their cache
            if await files.restore(root, key):
                log.info("restored the local model's prompt cache %s", key)
        response = await self.inner.complete(request, sink)
        if key is not None and files is not None and root and key not in server.slot_state.setdefault("saved", set()):
            server.slot_state["saved"].add(key)
            if not await files.exists(key) and await files.save(root, key):
                log.info("saved the local model's prompt cache %s", key)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
