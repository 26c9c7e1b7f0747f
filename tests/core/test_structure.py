"""The core's shape (docs/architecture.md, "The agent's parts"): the turn takes the parts, never the agent;
no module of agent/loop/ reads another object's private attribute; no parts module imports the loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

AGENT = Path(__file__).resolve().parents[2] / "agent"
LOOP = sorted((AGENT / "loop").glob("*.py"))
PARTS = ["compactor", "conversation", "endpoints", "model_caller", "profile", "titles", "tool_runner",
         "tool_views", "turn_control", "undo", "updates"]


def _imports(path: Path) -> set[str]:
    """Every module a file imports, TYPE_CHECKING blocks and function bodies included; a relative import
    (``from ..loop import x``) as its absolute name (``agentls.agent.loop.x``)."""
    package = ["agentls", "agent", *path.relative_to(AGENT).parent.parts]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def test_relative_imports_are_read_as_absolute_names() -> None:
    assert "agentls.agent.loop.parts.TurnParts" in _imports(AGENT / "loop" / "dispatch.py")
    assert "agentls.agent.config.Settings" in _imports(AGENT / "profile.py")


@pytest.mark.parametrize("path", LOOP, ids=[p.name for p in LOOP])
def test_no_loop_module_imports_the_agent(path: Path) -> None:
    assert not {n for n in _imports(path) if n == "agentls.agent.agent" or n.startswith("agentls.agent.agent.")}


@pytest.mark.parametrize("path", LOOP, ids=[p.name for p in LOOP])
def test_no_loop_module_reads_a_private_attribute_of_another_object(path: Path) -> None:
    private = [f"{path.name}:{node.lineno}: {ast.unparse(node)}" for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
               and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))]
    assert private == []


@pytest.mark.parametrize("name", PARTS)
def test_no_part_imports_the_loop_or_the_agent(name: str) -> None:
    imported = _imports(AGENT / f"{name}.py")
    assert not {n for n in imported if n.startswith(("agentls.agent.loop", "agentls.agent.agent"))}


def test_no_python_file_in_agent_is_over_400_lines() -> None:
    long = {str(p.relative_to(AGENT)): n for p in AGENT.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 400}
    assert long == {}
