"""Transcript builders and a hypothesis strategy for valid transcripts."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from agentls.agent.types import Message, ToolCall


def call(call_id: str, name: str = "read_file", **args: Any) -> ToolCall:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def user(text: str, **meta: Any) -> Message:
    msg: Message = {"role": "user", "content": text}
    if meta:
        msg["meta"] = meta
    return msg


def assistant(text: str | None = None, calls: list[ToolCall] | None = None) -> Message:
    msg: Message = {"role": "assistant", "content": text}
    if calls:
        msg["tool_calls"] = calls
    return msg


def tool(call_id: str, content: str, name: str = "read_file") -> Message:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def session(exchanges: int, rounds: int, result_chars: int, *, distinct: bool = True) -> list[Message]:
    """``exchanges`` user requests, each answered by ``rounds`` tool rounds and a final text."""
    out: list[Message] = []
    n = 0
    for e in range(exchanges):
        out.append(user(f"request {e}: please change module m{e}"))
        for _ in range(rounds):
            n += 1
            cid = f"call_{n}"
            out.append(assistant(f"step {n}", [call(cid, path=f"src/m{e}/f{n}.py")]))
            body = (f"# file {n}\n" if distinct else "# same\n") + ("x = 1\n" * (result_chars // 6))
            out.append(tool(cid, body))
        out.append(assistant(f"done with request {e}"))
    return out


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    """Valid transcripts: exchanges of tool rounds, steers, interrupted ends, big and small results."""
    out: list[Message] = []
    n = 0
    sizes = st.sampled_from([10, 300, 2500, 9000])
    for e in range(draw(st.integers(1, 6))):
        out.append(user(f"user {e} " + "u" * draw(st.sampled_from([5, 400, 3000]))))
        for r in range(draw(st.integers(0, 5))):
            k = draw(st.integers(1, 3))
            ids = [f"c{n + i}" for i in range(k)]
            n += k
            text = draw(st.sampled_from([None, "thinking", "t" * 500]))
            out.append(assistant(text, [call(i, path=f"p/{i}.py") for i in ids]))
            for i in ids:
                same = draw(st.booleans())
                out.append(tool(i, ("same output " if same else f"out {i} ") * (draw(sizes) // 10 + 1)))
            if draw(st.integers(0, 9)) == 0:
                out.append(user(f"steer {e}.{r}", steer=True))
        ending = draw(st.sampled_from(["text", "text", "tools", "none"]))
        if ending == "text" or out[-1]["role"] == "user":
            out.append(assistant(f"answer {e} " + "a" * draw(st.sampled_from([5, 800]))))
    if draw(st.booleans()):
        out.append(user("the latest request, verbatim"))
    return out
