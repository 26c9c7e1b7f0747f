"""The agents bench/exercism.py compares: agentls, Aider (whole and diff formats) and the bare model.

Each ``attempt`` runs one try in the task's folder and returns its time and exit code (None when the
agent has none); ``finish`` ends the task's session. Aider and the bare model talk to one llama.cpp
server (``ModelServer``: ``python -m agentls.agent.local.serve`` on the embedded GGUF, the context size
agentls uses); agentls starts its own, as a user's ``agentls run`` does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bench.exercism_tasks import Exercise, instructions

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ("agentls", "bare", "aider-whole", "aider-diff")
TRY_TIMEOUT = 900.0
CTX_SIZE = 8192
BARE_MAX_TOKENS = 2048
_BLOCK = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)


@dataclass
class Try:
    seconds: float
    exit_code: int | None = None
    note: str = ""


class Agent(Protocol):
    name: str

    def attempt(self, folder: Path, ex: Exercise, message: str, *, first: bool) -> Try: ...

    def finish(self) -> None: ...


def _clean_env(data: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("AGENTLS_")}
    if "AGENTLS_CACHE_DIR" in os.environ:
        env["AGENTLS_CACHE_DIR"] = os.environ["AGENTLS_CACHE_DIR"]
    if data is not None:
        env["AGENTLS_DATA_DIR"] = str(data)
        env["AGENTLS_CONFIG"] = str(data / "no-user-config.toml")
    return env


class ModelServer:
    """llama.cpp's server on the embedded model, for the agents that are not agentls."""

    def __init__(self) -> None:
        path = subprocess.run([sys.executable, "-m", "agentls.server", "model", "path"], capture_output=True,
                              text=True, check=True, cwd=ROOT).stdout.strip()
        self.proc = subprocess.Popen([sys.executable, "-m", "agentls.agent.local.serve", "--model", path,
                                      "--port", "0", "--ctx-size", str(CTX_SIZE), "--alias", "local"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, cwd=ROOT)
        assert self.proc.stdout is not None
        hello = json.loads(self.proc.stdout.readline() or "{}")
        if "url" not in hello:
            self.close()
            raise SystemExit(f"the model server did not start: {hello}")
        self.url: str = hello["url"]

    def chat(self, messages: list[dict[str, str]]) -> str:
        body = json.dumps({"model": "local", "messages": messages, "temperature": 0,
                           "max_tokens": BARE_MAX_TOKENS}).encode()
        req = urllib.request.Request(self.url + "/chat/completions", body, {"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=TRY_TIMEOUT) as resp:
            return str(json.loads(resp.read())["choices"][0]["message"]["content"] or "")

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()  # its lifeline: it exits on EOF
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class AgentlsAgent:
    name = "agentls"

    def __init__(self, scratch: Path) -> None:
        self.data = scratch / "agentls-data"
        self.data.mkdir(parents=True, exist_ok=True)
        self.session: str | None = None

    def attempt(self, folder: Path, ex: Exercise, message: str, *, first: bool) -> Try:
        extra = ["--session", self.session] if self.session and not first else []
        # --approval yolo: commands run unasked (still in the OS sandbox), so agentls may run the tests it was
        # given after its edit (docs/loop.md §9.11); the default auto-edit refuses commands in a headless run
        cmd = [sys.executable, "-m", "agentls.server", "run", "-w", str(folder), "--json", "--quiet",
               "--approval", "yolo", *extra, message]
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=_clean_env(self.data), cwd=ROOT,
                                  timeout=TRY_TIMEOUT)
        except subprocess.TimeoutExpired:
            return Try(time.monotonic() - started, None, "timed out")
        seconds = time.monotonic() - started
        try:
            result = json.loads(proc.stdout)
        except ValueError:
            result = {}
        self.session = str(result.get("session_id") or "") or self.session
        footer = proc.stderr.rstrip("\n").rsplit("\n", 1)[-1] if proc.stderr.strip() else ""
        return Try(seconds, proc.returncode, footer[:200])

    def finish(self) -> None:
        self.session = None


def code_block(reply: str, solution: str) -> str | None:
    """The reply's python code block (the first, or the one that follows the file's name), else its first."""
    blocks = _BLOCK.findall(reply)
    if not blocks:
        return None
    python = [body for lang, body in blocks if lang.lower() in ("python", "py", "")]
    return (python or [blocks[0][1]])[0]


class BareAgent:
    """One chat completion per try: the instructions, stub and tests in, the whole file out."""

    name = "bare"

    def __init__(self, server: ModelServer) -> None:
        self.server = server
        self.chat: list[dict[str, str]] = []

    def attempt(self, folder: Path, ex: Exercise, message: str, *, first: bool) -> Try:
        ask = f"Reply with the whole new {ex.solution} in one ```python code block."
        if first:
            files = "\n\n".join(f"{name}:\n```{lang}\n{text.rstrip()}\n```" for name, lang, text in (
                ("INSTRUCTIONS.md", "markdown", instructions(ex)),
                (ex.solution, "python", (folder / ex.solution).read_text()),
                (ex.test, "python", (folder / ex.test).read_text())))
            self.chat = [{"role": "user", "content": f"{message}\n\n{files}\n\n{ask}"}]
        else:
            self.chat.append({"role": "user", "content": f"{message}\n\n{ask}"})
        started = time.monotonic()
        try:
            reply = self.server.chat(self.chat)
        except OSError as exc:
            return Try(time.monotonic() - started, None, f"{type(exc).__name__}: {exc}")
        self.chat.append({"role": "assistant", "content": reply})
        code = code_block(reply, ex.solution)
        if code is not None:
            (folder / ex.solution).write_text(code)
        return Try(time.monotonic() - started, None, "" if code is not None else "no code block")

    def finish(self) -> None:
        self.chat = []


class AiderAgent:
    """Aider's ``Coder`` in a child of its own venv (bench/exercism_aider.py), one per task."""

    def __init__(self, edit_format: str, server: ModelServer, python: str) -> None:
        self.name = f"aider-{edit_format}"
        self.edit_format = edit_format
        self.server = server
        self.python = python
        self.proc: subprocess.Popen[str] | None = None

    def _start(self, folder: Path, ex: Exercise) -> subprocess.Popen[str]:
        env = {**_clean_env(), "OPENAI_API_BASE": self.server.url, "OPENAI_API_KEY": "none",
               "AIDER_ANALYTICS": "false", "AIDER_CHECK_UPDATE": "false", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        cmd = [self.python, str(ROOT / "bench" / "exercism_aider.py"), "--folder", str(folder),
               "--solution", ex.solution, "--edit-format", self.edit_format, "--read", "INSTRUCTIONS.md",
               "--read", ex.test, "--model", "openai/local"]
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, env=env)

    def attempt(self, folder: Path, ex: Exercise, message: str, *, first: bool) -> Try:
        if first or self.proc is None:
            self.finish()
            self.proc = self._start(folder, ex)
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        started = time.monotonic()
        timer = threading.Timer(TRY_TIMEOUT, proc.kill)
        timer.start()
        try:
            proc.stdin.write(json.dumps({"message": message}) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except OSError:
            line = ""
        finally:
            timer.cancel()
        seconds = time.monotonic() - started
        if not line:
            self.finish()
            return Try(seconds, None, "aider exited or timed out")
        reply: dict[str, Any] = json.loads(line)
        return Try(seconds, None, str(reply.get("error") or ""))

    def finish(self) -> None:
        if self.proc is not None:
            if self.proc.stdin:
                self.proc.stdin.close()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None


def make_agent(name: str, *, server: ModelServer | None, scratch: Path, aider_python: str | None) -> Agent:
    if name == "agentls":
        return AgentlsAgent(scratch)
    assert server is not None
    if name == "bare":
        return BareAgent(server)
    assert aider_python is not None
    return AiderAgent(name.removeprefix("aider-"), server, aider_python)
