"""``serve --draft ngram``: llama.cpp drafts from the context itself, so a plain-text copy of a file read
decodes in batches; without it (the default) nothing is drafted. Real model, real server process."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest

from .conftest import ROOT, needs_local_model

pytestmark = needs_local_model
FILE = "".join(f"def f{i}(x):\n    return x * {i} + {i * 7}\n\n\n" for i in range(12))


def _model() -> str:
    return subprocess.run([sys.executable, "-m", "agentls.server", "model", "path"], capture_output=True, text=True,
                          check=True, cwd=ROOT).stdout.strip().splitlines()[0]


@pytest.mark.parametrize("draft", ["ngram", "none"])
def test_a_copy_is_drafted_from_the_context_only_with_draft_ngram(draft: str) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "agentls.agent.local.serve", "--model", _model(), "--port", "0",
                             "--ctx-size", "2048", "--draft", draft], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        url = json.loads(proc.stdout.readline())["url"]
        body = {"temperature": 0, "max_tokens": 600, "messages": [{"role": "user", "content": (
            f"calc.py:\n```python\n{FILE}```\nAdd the comment `# calc` as its first line. Reply with the whole "
            "updated file in one ```python block.")}]}
        req = urllib.request.Request(url + "/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=600) as resp:
            reply = json.loads(resp.read())
        assert "def f11(x)" in reply["choices"][0]["message"]["content"]  # it did copy the file
        accepted = reply["timings"].get("draft_n_accepted") or 0
        assert (accepted > 50) if draft == "ngram" else accepted == 0, reply["timings"]
    finally:
        proc.kill()
        proc.wait()
