"""Root context files, the system prompt and token estimates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentls.agent.context.files import load_root_context
from agentls.agent.context.prompt import build_system_prompt
from agentls.agent.context.tokens import context_window_for, estimate_message, estimate_messages, estimate_text

ROOT = Path(__file__).resolve().parents[2]


async def test_agents_md_wins_then_claude_then_cursorrules(tmp_path: Path) -> None:
    assert await load_root_context(tmp_path) is None
    (tmp_path / ".cursorrules").write_text("cursor rules")
    assert await load_root_context(tmp_path) == "[Project instructions from .cursorrules]\ncursor rules"
    (tmp_path / "CLAUDE.md").write_text("claude rules")
    assert (await load_root_context(tmp_path) or "").startswith("[Project instructions from CLAUDE.md]")
    (tmp_path / "AGENTS.md").write_text("agents rules\n")
    assert await load_root_context(tmp_path) == "[Project instructions from AGENTS.md]\nagents rules"


async def test_empty_file_falls_through(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("  \n")
    (tmp_path / "CLAUDE.md").write_text("claude rules")
    assert "claude rules" in (await load_root_context(tmp_path) or "")


@pytest.mark.parametrize("size", [30_000, 400_000])
async def test_root_context_is_capped_head_and_tail(tmp_path: Path, size: int) -> None:
    (tmp_path / "AGENTS.md").write_text("START " + "x" * size + " END")
    text = await load_root_context(tmp_path)
    assert text is not None and len(text) < 20_200
    assert "START" in text and text.endswith("END") and "characters omitted" in text


async def test_root_context_symlinked_outside_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "secret.md").write_text("SECRET")
    (root / "AGENTS.md").symlink_to(tmp_path / "secret.md")
    assert await load_root_context(root) is None


def test_system_prompt_sections_and_order(tmp_path: Path) -> None:
    prompt = build_system_prompt(root=tmp_path, root_context="[Project instructions from AGENTS.md]\nuse tabs",
                                 extra="Be terse.", tool_names=["read_file", "edit_file", "terminal"])
    assert f"Workspace root: {tmp_path}" in prompt
    start, end = prompt.index("<project-instructions>"), prompt.index("</project-instructions>")
    assert start < prompt.index("use tabs") < end
    assert prompt.rstrip().endswith("Be terse.")
    assert "`edit_file`" in prompt and "`terminal`" in prompt
    assert "`write_file` only" not in prompt  # guidelines follow the tools that exist
    bare = build_system_prompt(root=tmp_path, root_context=None)
    assert "<project-instructions>" not in bare and "`edit_file`" in bare


def test_system_prompt_is_deterministic_across_processes(tmp_path: Path) -> None:
    code = ("import sys; from pathlib import Path; from agent.context.prompt import build_system_prompt;"
            "sys.stdout.write(build_system_prompt(root=Path(sys.argv[1]), root_context='rules', extra='x',"
            "tool_names=['read_file']))")
    runs = {subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True,
                           text=True, check=True, env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout
            for seed in (1, 2)}
    local = build_system_prompt(root=tmp_path, root_context="rules", extra="x", tool_names=["read_file"])
    assert runs == {local}


def test_estimates() -> None:
    assert estimate_text("") == 0 and estimate_text("abcd") == 1 and estimate_text("abcde") == 2
    plain = estimate_message({"role": "user", "content": "x" * 400})
    assert 100 <= plain <= 110
    with_call = estimate_message({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "write_file", "arguments": "y" * 4000}}]})
    assert with_call > 1000  # tool-call arguments count
    image = estimate_message({"role": "user", "content": [{"type": "text", "text": "see"},
                                                          {"type": "image_url", "image_url": {"url": "data:"}}]})
    assert image > 700
    assert estimate_messages([{"role": "user", "content": "x" * 400}] * 3) == 3 * plain


@pytest.mark.parametrize(("model", "window"), [
    ("gpt-4o", 128_000), ("openai/gpt-4o-mini", 128_000), ("gpt-4.1-mini", 1_047_576), ("gpt-5", 400_000),
    ("o3-mini", 200_000), ("o1", 200_000), ("anthropic/claude-3-5-sonnet-20241022", 200_000),
    ("claude-sonnet-4-5", 200_000), ("claude-3.7-sonnet", 200_000), ("gemini-2.5-pro", 1_048_576),
    ("meta-llama/Llama-3.1-8B-Instruct", 131_072), ("llama3.2:3b", 131_072), ("qwen2.5-coder:7b", 32_768),
    ("Qwen/Qwen2.5-Coder-32B-Instruct", 32_768), ("deepseek-chat", 128_000), ("mistral-large-latest", 128_000),
    ("mistral-7b-instruct", 32_768), ("something-unknown", 128_000),
])
def test_context_windows(model: str, window: int) -> None:
    assert context_window_for(model) == window


def test_unknown_model_default() -> None:
    assert context_window_for("mystery", default=4096) == 4096
    assert context_window_for("", default=4096) == 4096
