"""docs/loop.md stays true: every ``docs/loop.md §N`` reference in the repository names a section that exists,
and its tables of exit reasons, error categories, approval modes and built-in tools match the code."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from agentls.agent.permissions import PermissionPolicy
from agentls.agent.providers.errors import HINTS
from agentls.agent.result import ExitReason
from agentls.agent.tools.registry import BUILTIN_TOOLS

ROOT = Path(__file__).resolve().parents[2]
LOOP = (ROOT / "docs" / "loop.md").read_text()
HEADING = re.compile(r"^(#{2,3}) (\d+(?:\.\d+)?)\.? ", re.MULTILINE)
SECTION_REF = re.compile(r"§(\d+(?:\.\d+)?)")


def _sections() -> dict[str, str]:
    """Section number -> its text (a top-level section includes its subsections)."""
    marks = [(m.start(), len(m.group(1)), m.group(2)) for m in HEADING.finditer(LOOP)]
    out: dict[str, str] = {}
    for i, (start, level, number) in enumerate(marks):
        end = next((s for s, lv, _ in marks[i + 1:] if lv <= level), len(LOOP))
        out[number] = LOOP[start:end]
    return out


SECTIONS = _sections()


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    names = [n for n in listed.decode().split("\0") if n.endswith((".py", ".md", ".toml", ".ts", ".lua", ".el"))]
    return [ROOT / n for n in names if (ROOT / n).is_file()]


def _rows(section: str) -> list[list[str]]:
    """The body rows of the tables in a section, as stripped cells."""
    rows = []
    for line in SECTIONS[section].splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return [r for r in rows if not r[0].startswith(("tool", "category", "`ExitReason`", "`approval`", "field",
                                                    "parameter", "the turn"))]


def test_the_sections_are_numbered_one_to_nine() -> None:
    assert [n for n in SECTIONS if "." not in n] == [str(i) for i in range(1, 10)]


def test_every_reference_names_a_section_that_exists() -> None:
    missing: list[str] = []
    for path in _tracked_text_files():
        text = path.read_text(errors="replace")
        for at in (m.end() for m in re.finditer(r"docs/loop\.md", text)):
            # The reference runs to the end of its sentence (it may wrap onto the next line).
            tail = re.split(r"[.)]\s|\n\n", text[at:at + 160], maxsplit=1)[0]
            missing += [f"{path.relative_to(ROOT)}: §{n}" for n in SECTION_REF.findall(tail) if n not in SECTIONS]
    missing += [f"docs/loop.md: §{n}" for n in SECTION_REF.findall(LOOP) if n not in SECTIONS]
    assert not missing, missing


def test_no_reference_to_the_briefs_outside_the_repository() -> None:
    offenders = [str(p.relative_to(ROOT)) for p in _tracked_text_files()
                 if re.search(r"\b(LOOP|PROTOCOL)\.md\b", p.read_text(errors="replace"))]
    assert not offenders, offenders


def test_exit_reasons_match_the_enum() -> None:
    documented = {row[0].strip("`") for row in _rows("1.5") if row[0].startswith("`") and len(row) == 2}
    assert documented == {reason.value for reason in ExitReason}


def test_error_categories_and_hints_match_the_classifier() -> None:
    documented = {row[0].strip("`"): tuple(cell == "✓" for cell in row[2:5]) for row in _rows("4.1")}
    assert documented == {name: (h.retryable, h.compress, h.fallback) for name, h in HINTS.items()}


def test_approval_table_matches_the_policy() -> None:
    word = {"ask": "ask", "allow": "run"}
    for mode, edits, commands in _rows("9.2"):
        policy = PermissionPolicy(mode.strip("`"))
        assert (word[policy.decide("edit", "edit", False)], word[policy.decide("execute", "execute:ls", False)]) \
            == (edits, commands), mode


def _documented_arguments(cell: str) -> dict[str, bool]:
    """``name -> required`` from a cell like "`path`, `offset?` (first line), `limit?`"."""
    bare = re.sub(r"\([^()]*\)", "", cell)
    return {name: not optional for name, optional in re.findall(r"`(\w+)(\??)`", bare)}


def test_tool_table_matches_the_registry() -> None:
    rows = {row[0].strip("`"): row[1] for row in _rows("9.1")}
    assert list(rows) == [tool.name for tool in BUILTIN_TOOLS]
    for tool in BUILTIN_TOOLS:
        params: dict[str, Any] = tool.parameters
        actual = {name: name in params.get("required", []) for name in params["properties"]}
        assert _documented_arguments(rows[tool.name]) == actual, tool.name
    item = BUILTIN_TOOLS[-1].parameters["properties"]["items"]["items"]
    fields = ", ".join(n if n in item["required"] else f"{n}?" for n in item["properties"])
    assert f"{{{fields}}}" in rows["todo"]
    assert all(f"`{s}`" in rows["todo"] for s in item["properties"]["status"]["enum"])


def test_the_construction_table_names_every_parameter_and_setting() -> None:
    """§1.1 lists every parameter of ``AIAgent`` and every setting it takes (those read only while the settings
    are loaded, ``api_key_env`` and ``trust_workspace_config``, are the README's)."""
    import inspect
    from dataclasses import fields

    from agentls.agent import AIAgent
    from agentls.agent.config import Settings

    section = LOOP[LOOP.index("### 1.1 Construction"):LOOP.index("### 1.2")]
    listed = {name for row in re.findall(r"^\| ((?:`[a-z_]+`(?:, )?)+) \|", section, re.MULTILINE)
              for name in re.findall(r"`([a-z_]+)`", row)}
    wanted = set(inspect.signature(AIAgent).parameters) - {"self", "options"}
    wanted |= {f.name for f in fields(Settings)} - {"sources", "warnings", "api_key_env", "trust_workspace_config"}
    assert wanted - listed == set()
