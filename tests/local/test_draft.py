"""``serve --draft ngram``: llama.cpp drafts from the context itself, so a plain-text copy of a file read
decodes in batches; without it (the default) nothing is drafted. Real model, real server process."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import anyio.abc
import httpx
import pytest

from agentls.agent.local.child import read_line
from agentls.agent.local.model import ensure_model

from .conftest import ROOT, needs_local_model

pytestmark = needs_local_model
FILE = "".join(f"def f{i}(x):\n    return x * {i} + {i * 7}\n\n\n" for i in range(12))


@pytest.mark.parametrize("draft", ["ngram", "none"])
async def test_a_copy_is_drafted_from_the_context_only_with_draft_ngram(draft: str) -> None:
    model = str(await ensure_model())
    command = [sys.executable, "-m", "agentls.agent.local.serve", "--model", model, "--port", "0", "--ctx-size",
               "2048", "--draft", draft]
    async with await anyio.open_process(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, cwd=ROOT) as proc:
        try:
            await _ask(proc, draft)
        finally:
            proc.kill()


async def _ask(proc: anyio.abc.Process, draft: str) -> None:
    hello, why = await read_line(proc, 120, 5, lambda _: None)
    assert hello is not None, why
    url = json.loads(hello)["url"]
    body = {"temperature": 0, "max_tokens": 600, "messages": [{"role": "user", "content": (
        f"calc.py:\n```python\n{FILE}```\nAdd the comment `# calc` as its first line. Reply with the whole "
        "updated file in one ```python block.")}]}
    async with httpx.AsyncClient(timeout=600, trust_env=False) as client:
        reply = (await client.post(url + "/chat/completions", json=body)).json()
    assert "def f11(x)" in reply["choices"][0]["message"]["content"]  # it did copy the file
    accepted = reply["timings"].get("draft_n_accepted") or 0
    assert (accepted > 50) if draft == "ngram" else accepted == 0, reply["timings"]
