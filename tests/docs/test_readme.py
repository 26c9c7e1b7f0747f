"""The README's quickstart stays true: its config snippets parse and its commands exist."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def blocks(lang: str) -> list[str]:
    return [body for kind, body in BLOCK.findall(README) if kind == lang]


def test_toml_snippets_parse() -> None:
    assert blocks("toml")
    for body in blocks("toml"):
        tomllib.loads(body)


def test_json_snippets_parse() -> None:
    assert blocks("json")
    for body in blocks("json"):
        assert "agent_servers" in json.loads(body)


def test_the_two_commands_and_every_agentls_subcommand_exist() -> None:
    shell = "\n".join(blocks("sh"))
    assert "./scripts/setup && .venv/bin/agentls run" in shell and "./scripts/test" in shell
    for script in ("scripts/setup", "scripts/test", ".ci/run"):
        assert (ROOT / script).stat().st_mode & 0o111, f"{script} is not executable"
    for sub in sorted(set(re.findall(r"agentls (run|sessions|sandbox|fake-provider|lsp|acp|model)\b", README))):
        proc = subprocess.run([sys.executable, "-m", "agentls.server", sub, "--help"], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, (sub, proc.stderr)


def test_run_flags_in_the_readme_are_real() -> None:
    proc = subprocess.run([sys.executable, "-m", "agentls.server", "run", "--help"], capture_output=True, text=True,
                          timeout=60)
    for flag in sorted(set(re.findall(r"agentls run[^\n]*?(--[a-z-]+)", README))):
        assert flag in proc.stdout, flag
