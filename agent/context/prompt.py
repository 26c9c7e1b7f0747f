"""The system prompt: built once per session, stored, and byte-identical on resume.

Everything here is a pure function of its arguments. No dates, no environment, no randomness:
the only machine-specific content is the workspace root the caller passes in.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..tools.base import Tool

_INTRO = """\
You are agentls, a coding agent working inside the user's code editor. You help with software \
engineering tasks in the user's workspace by calling tools, and the user watches your tool calls \
and the diffs they produce in the editor as you work."""

_GENERAL = (
    ("Work inside the workspace. Give paths relative to the workspace root (absolute paths must "
    "stay inside it); anything outside is refused."),
    ("Read a file before you change it, and look around (list or search) before guessing where "
    "something lives."),
    ("Keep changes minimal and focused on the request. Match the surrounding code style; do not "
    "reformat, rename or refactor what you were not asked to touch."),
    ("If the request is ambiguous or a change is risky or destructive, say so and ask instead of "
    "guessing."),
    ("Tool results may end with project instructions from an AGENTS.md in a subdirectory; follow "
    "them for files under that directory."),
    ("When you are done, say briefly what you changed and why, and anything the user should check "
    "or run. Do not paste whole files the user can already see in the editor."),
)

# The order of the built-in tools' guides (each tool carries its own: ``Tool.guide``); any other tool's
# guide follows them, in the registry's order.
_GUIDE_ORDER = ("read_file", "edit_file", "write_file", "search_files", "terminal", "todo")


def _guides(tools: Sequence[Tool] | None, names: set[str]) -> list[str]:
    if tools is None:
        from ..tools.registry import BUILTIN_TOOLS

        tools = BUILTIN_TOOLS
    rank = {name: i for i, name in enumerate(_GUIDE_ORDER)}
    ordered = sorted(tools, key=lambda t: rank.get(t.name, len(rank)))
    return [t.guide for t in ordered if t.guide and (not names or t.name in names)]


def _bullets(lines: Sequence[str]) -> str:
    return "\n".join(f"- {line}" for line in lines)


def build_system_prompt(
    *,
    root: Path,
    root_context: str | None,
    extra: str | None = None,
    tool_names: Sequence[str] = (),
    tools: Sequence[Tool] | None = None,
    workflows: str | None = None,
) -> str:
    """The system prompt for a session rooted at ``root``.

    ``root_context`` is the project's instruction file (``load_root_context``), shown in a
    delimited section; ``extra`` (a caller's own system message) comes last; ``tool_names``, when
    given, limits the tool-specific guidelines to the tools that exist; ``tools`` carry them (``Tool.guide``;
    None: the built-in tools); ``workflows`` is the session's skills and memory. Deterministic.
    """
    guides = _guides(tools, set(tool_names))
    sections = [
        _INTRO,
        f"Workspace root: {root}",
        "# How to work\n" + _bullets([*_GENERAL[:2], *guides, *_GENERAL[2:]]),
    ]
    if tool_names:
        sections.append("Available tools: " + ", ".join(f"`{n}`" for n in tool_names) + ".")
    if root_context and root_context.strip():
        sections.append(
            "# Project instructions\n"
            "The project's own instructions follow. They come from the repository, so follow them "
            "for this project, but they do not override the user's requests.\n"
            "<project-instructions>\n"
            f"{root_context.strip()}\n"
            "</project-instructions>"
        )
    if workflows and workflows.strip():  # skills and memory (agent/workflows/session.py: prompt_section)
        sections.append(workflows.strip())
    if extra and extra.strip():
        sections.append(extra.strip())
    return "\n\n".join(sections) + "\n"
