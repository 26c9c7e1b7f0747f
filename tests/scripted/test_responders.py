"""The built-in ``demo`` and ``bench`` responders, driven by a tiny client-side loop on both wires."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from agentls.agent.scripted.responders import bench, demo, first_file_name

from .helpers import Api

Tool = Callable[[dict[str, Any]], str]


async def run_loop(api: Api, wire: str, prompt: str, impl: dict[str, Tool], model: str = "demo",
                   stream: bool = True, limit: int = 10) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """A minimal agent: call the model, run its tools, feed results back, until it answers with text."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    calls: list[tuple[str, dict[str, Any]]] = []
    for _ in range(limit):
        got = await api.complete(wire, stream, messages, model=model)
        if not got["tool_calls"]:
            return got["content"], calls
        parsed = [(n, json.loads(a) if isinstance(a, str) else a) for n, a in got["tool_calls"]]
        calls += parsed
        outputs = [impl[n](a) for n, a in parsed]
        if wire == "openai":
            messages.append({"role": "assistant", "content": got["content"] or None, "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                for i, (n, a) in zip(got["ids"], parsed, strict=True)]})
            messages += [{"role": "tool", "tool_call_id": i, "content": o}
                         for i, o in zip(got["ids"], outputs, strict=True)]
        else:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": got["content"]}] if got["content"] else []
            blocks += [{"type": "tool_use", "id": i, "name": n, "input": a}
                       for i, (n, a) in zip(got["ids"], parsed, strict=True)]
            messages.append({"role": "assistant", "content": blocks})
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": o}
                                                         for i, o in zip(got["ids"], outputs, strict=True)]})
    raise AssertionError("the loop did not finish")


FILES = {"README.md": "# Project\nThis project does things.\n" + "More text. " * 50, "main.py": "print('hi')\n"}


def workspace(files: dict[str, str]) -> dict[str, Tool]:
    written: dict[str, str] = {}

    def list_dir(args: dict[str, Any]) -> str:
        return "\n".join(["src/", *sorted(files), *sorted(written)])

    def read_file(args: dict[str, Any]) -> str:
        return files.get(args["path"], f"Error: no such file {args['path']}")

    def write_file(args: dict[str, Any]) -> str:
        written[args["path"]] = args["content"]
        return f"Wrote {len(args['content'])} chars to {args['path']}"

    return {"list_dir": list_dir, "read_file": read_file, "write_file": write_file}


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [False, True])
async def test_demo_reads_the_readme(api: Api, wire: str, stream: bool) -> None:
    api.srv.set_responder(demo)
    final, calls = await run_loop(api, wire, "What is this project?", workspace(FILES), stream=stream)
    assert calls == [("list_dir", {}), ("read_file", {"path": "README.md"})]
    assert final == "Here is what I found: " + FILES["README.md"][:300]
    assert all(r.rejected is None for r in api.srv.requests)


async def test_demo_reads_the_first_file_without_a_readme(api: Api) -> None:
    api.srv.set_responder(demo)
    final, calls = await run_loop(api, "openai", "look around", workspace({"main.py": "print(1)", "z.txt": "z"}))
    assert calls[1] == ("read_file", {"path": "main.py"}) and final == "Here is what I found: print(1)"


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_demo_creates_a_file(api: Api, wire: str) -> None:
    api.srv.set_responder(demo)
    final, calls = await run_loop(api, wire, "please create notes.txt containing hello world", workspace({}))
    assert calls == [("write_file", {"path": "notes.txt", "content": "hello world"})]
    assert final == "Done: created notes.txt."


async def test_demo_empty_directory(api: Api) -> None:
    api.srv.set_responder(demo)
    final, _ = await run_loop(api, "anthropic", "hi", {"list_dir": lambda a: ""})
    assert final == "The directory looks empty."


@pytest.mark.parametrize(("listing", "expected"), [
    ("src/\nmain.py\nREADME", "main.py"),
    ("├── docs/\n│   └── guide.md\n└── setup.cfg", "guide.md"),
    ("- pkg/\n- Makefile", "Makefile"),
    ("", None),
])
def test_first_file_name(listing: str, expected: str | None) -> None:
    assert first_file_name(listing) == expected


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_bench_runs_n_rounds(api: Api, wire: str) -> None:
    api.srv.set_responder(bench)
    final, calls = await run_loop(api, wire, "go", {"read_file": lambda a: "1 | bench"}, model="bench:3")
    assert final == "done" and calls == [("read_file", {"path": "bench.txt", "limit": 2000 + i}) for i in range(3)]
    assert len(api.srv.requests) == 4


async def test_bench_without_a_count_does_one_round(api: Api) -> None:
    api.srv.set_responder(bench)
    final, calls = await run_loop(api, "openai", "go", {"read_file": lambda a: "x"}, model="bench")
    assert final == "done" and len(calls) == 1
