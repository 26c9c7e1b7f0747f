"""Prompt size and first-step time of the local model: the general prompt against the compact one.

    .venv/bin/python bench/local_prompt.py [--workspace examples/hello] [--json]

Counts the tokens of the first request's prefix (system prompt and tool schemas, through the model's
own chat template: llama.cpp's ``/apply-template`` and ``/tokenize``), then times the first step three
ways on one server: cold (empty cache), after a slot restore (what a new ``agentls run`` gets once the
cache is warm), and warm (the prompt cache of the previous request), reading llama.cpp's own
``timings`` (``prompt_n``: tokens processed; ``cache_n``: tokens reused).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx

from agentls.agent.context.prompt import build_system_prompt
from agentls.agent.local.prompt import CompactSchemas, compact_system_prompt, grammar_paths, listed_files
from agentls.agent.local.runtime import LocalModelServer
from agentls.agent.providers.json_mode import JSON_MODE_SYSTEM_NOTE, build_response_format
from agentls.agent.tools.registry import ToolRegistry

QUESTION = "What does README.md say?"


def prompts(workspace: Path) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    registry = ToolRegistry()
    full = registry.schemas()
    compact = CompactSchemas().of(registry)
    general = build_system_prompt(root=workspace, root_context=None, tool_names=registry.names)
    small = compact_system_prompt(root=workspace, root_context=None, extra=None, files=listed_files(workspace))
    return {"general": (general, full), "compact": (small, compact)}


async def count(client: httpx.AsyncClient, root: str, system: str, tools: list[dict[str, Any]]) -> dict[str, int]:
    async def tokens(messages: list[dict[str, Any]], with_tools: bool) -> int:
        body: dict[str, Any] = {"messages": messages}
        if with_tools:
            body["tools"] = tools
        prompt = (await client.post(root + "/apply-template", json=body)).json()["prompt"]
        return len((await client.post(root + "/tokenize", json={"content": prompt})).json()["tokens"])

    user = [{"role": "user", "content": "x"}]
    bare = await tokens(user, False)
    with_system = await tokens([{"role": "system", "content": system}, *user], False)
    everything = await tokens([{"role": "system", "content": system}, *user], True)
    return {"system_prompt": with_system - bare, "tool_schemas": everything - with_system, "prefix": everything}


async def step(client: httpx.AsyncClient, url: str, system: str, tools: list[dict[str, Any]],
               paths: list[str] | None) -> dict[str, Any]:
    body = {"model": "local", "stream": False, "temperature": 0, "max_tokens": 64, "tools": tools,
            "response_format": build_response_format(tools, allow_final=False, paths=paths),
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": f"{QUESTION}\n\n{JSON_MODE_SYSTEM_NOTE}"}]}
    started = time.monotonic()
    data = (await client.post(url + "/chat/completions", json=body)).json()
    t = data.get("timings") or {}
    return {"seconds": round(time.monotonic() - started, 2), "prompt_n": t.get("prompt_n"),
            "cache_n": t.get("cache_n"), "reply": data["choices"][0]["message"].get("content")}


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", default=str(ROOT / "examples" / "hello"))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--tokens-only", action="store_true", help="count the tokens; time no step")
    ns = ap.parse_args()
    ws = Path(ns.workspace).resolve()
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as slots:
        server = LocalModelServer(slot_dir=Path(slots))
        url = await server.start()
        root = url.removesuffix("/v1")
        try:
            async with httpx.AsyncClient(timeout=600) as client:
                for name, (system, tools) in prompts(ws).items():
                    out[name] = await count(client, root, system, tools)
                system, tools = prompts(ws)["compact"]
                paths = grammar_paths(listed_files(ws))
                if ns.tokens_only:
                    return _print(out, ns.json)
                await client.post(root + "/slots/0?action=erase")
                out["cold"] = await step(client, url, system, tools, paths)
                out["warm"] = await step(client, url, system, tools, paths)
                await client.post(root + "/slots/0?action=save", json={"filename": "b.bin"})
                await client.post(root + "/slots/0?action=erase")
                await client.post(root + "/slots/0?action=restore", json={"filename": "b.bin"})
                out["restored"] = await step(client, url, system, tools, paths)
        finally:
            await server.stop()
    return _print(out, ns.json)


def _print(out: dict[str, Any], as_json: bool) -> int:
    if as_json:
        print(json.dumps(out, indent=2))
        return 0
    for name in ("general", "compact"):
        c = out[name]
        print(f"{name:8} system prompt {c['system_prompt']:5} tokens, tool schemas {c['tool_schemas']:5}, "
              f"prefix {c['prefix']:5}")
    for name in ("cold", "restored", "warm"):
        if name not in out:
            continue
        s = out[name]
        print(f"first step, {name:8}: {s['seconds']:6.2f} s, processed {s['prompt_n']} tokens, reused {s['cache_n']}"
              f" -> {s['reply']}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
