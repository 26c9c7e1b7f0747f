"""Time from process start to the ``initialize`` answer: ``agentls acp`` against a bare ACP SDK agent.

    python tests/acp/acp_harness/startup.py [runs]

Prints the median of ``runs`` (default 10) for both, plus agentls' time to a first ``session/new``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENTLS = str(Path(sys.executable).parent / "agentls")
INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n'
BARE_AGENT = """
import asyncio
from typing import Any
from acp import Agent, PROTOCOL_VERSION, run_agent
from acp.schema import InitializeResponse

class Bare(Agent):
    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION)

asyncio.run(run_agent(Bare()))
"""


def time_to_answers(command: list[str], lines: list[bytes], env: dict[str, str] | None = None) -> list[float]:
    """Seconds from spawning ``command`` to each answer, sending line i+1 after answer i."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env=env)
    assert process.stdin is not None and process.stdout is not None
    times = []
    for line in lines:
        process.stdin.write(line)
        process.stdin.flush()
        while True:
            answer = json.loads(process.stdout.readline())
            if "id" in answer and "method" not in answer:
                break
        assert "result" in answer, answer
        times.append(time.perf_counter() - started)
    process.kill()  # the measurement is done; no need to wait for a clean exit
    process.wait(15)
    return times


def median_initialize(command: list[str], runs: int) -> float:
    return statistics.median(time_to_answers(command, [INITIALIZE])[0] for _ in range(runs))


def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare_agent.py"
        bare.write_text(BARE_AGENT)
        env = {**os.environ, "AGENTLS_DATA_DIR": tmp, "AGENTLS_MODEL": "m", "AGENTLS_API_KEY": "k",
               "AGENTLS_BASE_URL": "http://127.0.0.1:9/v1"}
        new = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new",
                          "params": {"cwd": tmp, "mcpServers": []}}).encode() + b"\n"
        agentls = median_initialize([AGENTLS, "acp"], runs)
        baseline = median_initialize([sys.executable, str(bare)], runs)
        first_session = statistics.median(time_to_answers([AGENTLS, "acp"], [INITIALIZE, new], env)[1]
                                          for _ in range(runs))
    print(f"initialize, median of {runs}: agentls acp {agentls:.3f} s, bare ACP SDK agent {baseline:.3f} s")
    print(f"agentls acp to a first session/new answer, median of {runs}: {first_session:.3f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
