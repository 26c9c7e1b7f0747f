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

A workspace never seen before has no file of its own, but its prompt starts like every other's: the
compact system prompt's static part goes first as a system message of its own, then the chat template's
tool schemas, then the workspace's part as a second system message (``split_system`` in
agent/local/prompt.py; the stored system prompt is unchanged). So each file is named
``<static key>-<key>.bin``, where the static key hashes the model, the static part and the tools, and a
fresh server with no file for its key restores the newest file with the same static key: llama.cpp then
processes only the workspace's part and the request.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from .prompt import split_system
from ..providers.base import ProviderRequest, ProviderResponse, StreamSink
from ..types import Message

if TYPE_CHECKING:
    from .runtime import LocalModelServer
    from ..providers.base import Provider

log = logging.getLogger(__name__)
MAX_FILES = 16
SLOT = 0


def _hash(model_id: str, system: str, request: ProviderRequest, size: int) -> str:
    h = hashlib.sha256()
    h.update(model_id.encode())
    h.update(b"\x00" + system.encode("utf-8", "surrogatepass"))
    h.update(b"\x00" + json.dumps(list(request.tools), sort_keys=True).encode())
    return h.hexdigest()[:size]


def prompt_key(model_id: str, request: ProviderRequest) -> str:
    """``<static key>-<key>``: the static key covers what every workspace's prompt starts with."""
    parts = split_system(request.system)
    static = _hash(model_id, parts[0] if parts else request.system, request, 12)
    return f"{static}-{_hash(model_id, request.system, request, 24)}"


def two_system_messages(request: ProviderRequest) -> ProviderRequest:
    """The request with a compact system prompt sent as its static part, then the workspace's part as a
    second system message (the tools render between them)."""
    parts = split_system(request.system)
    if parts is None:
        return request
    return replace(request, system=parts[0], messages=[_system_message(parts[1]), *request.messages])


@functools.lru_cache(maxsize=8)
def _system_message(text: str) -> Message:
    return {"role": "system", "content": text}  # the same object each step: the wire cache keeps its bytes


class SlotFiles:
    """llama.cpp's slot save/restore for one running server, by key."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def filename(self, key: str) -> str:
        return f"{key}.bin"

    async def exists(self, key: str) -> bool:
        return await anyio.Path(self.directory / self.filename(key)).is_file()

    def _nearest(self, key: str) -> str | None:
        """``key`` when its file exists, else the newest file's key with the same static key."""
        if (self.directory / self.filename(key)).is_file():
            return key
        static = key.split("-", 1)[0]
        try:
            same = sorted(self.directory.glob(f"{static}-*.bin"), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return None
        return same[0].name.removesuffix(".bin") if same else None

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
        """Restores ``key``'s file, or the newest one with its static key (another workspace's)."""
        found = await anyio.to_thread.run_sync(self._nearest, key)
        if found is None:
            return False
        ok = await self._post(root_url, "restore", found)
        if ok:  # used: keep it among the newest
            await anyio.to_thread.run_sync(lambda: (self.directory / self.filename(found)).touch())
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
        response = await self.inner.complete(two_system_messages(request), sink)
        if key is not None and files is not None and root and key not in server.slot_state.setdefault("saved", set()):
            server.slot_state["saved"].add(key)
            if not await files.exists(key) and await files.save(root, key):
                log.info("saved the local model's prompt cache %s", key)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
